//! The C-style preprocessor P4_16 programs rely on (P4_16 §6.2: "P4 uses
//! the C preprocessor"), implemented for the subset real programs use.
//!
//! Input: a root file already added to a [`SourceMap`], and a [`Loader`]
//! that finds `#include`d files. Output: an [`Expanded`] text — the program
//! with includes spliced in, macros expanded and directives removed — plus a
//! map from every byte of it back to `(file, original offset)`, so a token
//! found by the lexer gets a [`Span`] in the file the user wrote.
//!
//! Supported: `#include <f>` / `#include "f"` (quoted names are looked up
//! next to the including file first), object-like and function-like
//! `#define` (with `##` pasting; no `#` stringification), `#undef`, `#if`/`#elif` with
//! `defined`, integers and C operators, `#ifdef`, `#ifndef`, `#else`,
//! `#endif`, `#error`, `#warning`; `#line` and `#pragma` are ignored
//! (`#pragma once` is honoured). Backslash-newline joins lines, in directives
//! and in program text alike (C's line splicing, which p4c's `cpp` applies
//! before anything else: a `//` comment ending in a backslash runs on).
//!
//! Contract: never panics; recursion (includes, macro expansion) is bounded
//! ([`MAX_INCLUDE_DEPTH`], [`MAX_EXPANSION_DEPTH`]). Text produced by a macro
//! maps to the span of the macro use. Comments and strings pass through
//! untouched (the lexer removes comments), and macros are not expanded
//! inside them.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::diag::{Diagnostic, FileId, SourceMap, Span, codes};

/// How deep `#include`s may nest.
pub const MAX_INCLUDE_DEPTH: usize = 64;
/// How deep macro expansion may nest.
pub const MAX_EXPANSION_DEPTH: usize = 64;
/// Upper bound on the expanded text, in bytes (guards against macro bombs).
pub const MAX_EXPANDED_BYTES: usize = 64 << 20;

/// Our `core.p4`, built into the compiler.
pub const CORE_P4: &str = include_str!("../../../include/core.p4");
/// Our `v1model.p4`, built into the compiler.
pub const V1MODEL_P4: &str = include_str!("../../../include/v1model.p4");

/// Finds the text of `#include`d files.
pub trait Loader {
    /// Resolves `name` as written in `#include <name>` (`angle`) or
    /// `#include "name"`, included from the file called `from`. Returns the
    /// display name (a path) and the text.
    fn load(&mut self, name: &str, angle: bool, from: &str) -> Option<(String, String)>;
}

/// Loads includes from disk: quoted names next to the including file
/// first, then each include directory in order, then the built-in
/// `core.p4` / `v1model.p4`.
#[derive(Clone, Debug, Default)]
pub struct FsLoader {
    /// Directories searched, in order.
    pub include_dirs: Vec<PathBuf>,
}

impl Loader for FsLoader {
    fn load(&mut self, name: &str, angle: bool, from: &str) -> Option<(String, String)> {
        let mut candidates = Vec::new();
        if !angle && let Some(dir) = Path::new(from).parent() {
            candidates.push(dir.join(name));
        }
        candidates.extend(self.include_dirs.iter().map(|d| d.join(name)));
        for c in candidates {
            if let Ok(text) = std::fs::read_to_string(&c) {
                return Some((c.to_string_lossy().into_owned(), text));
            }
        }
        builtin(name)
    }
}

/// Serves files from memory (for tests and fuzzing), then the built-ins.
#[derive(Clone, Debug, Default)]
pub struct MemLoader {
    /// File name → text.
    pub files: HashMap<String, String>,
}

impl Loader for MemLoader {
    fn load(&mut self, name: &str, _angle: bool, _from: &str) -> Option<(String, String)> {
        match self.files.get(name) {
            Some(t) => Some((name.to_owned(), t.clone())),
            None => builtin(name),
        }
    }
}

/// The built-in include files, by the names programs include them as.
fn builtin(name: &str) -> Option<(String, String)> {
    match name {
        "core.p4" => Some(("<builtin>/core.p4".to_owned(), CORE_P4.to_owned())),
        "v1model.p4" => Some(("<builtin>/v1model.p4".to_owned(), V1MODEL_P4.to_owned())),
        _ => None,
    }
}

/// One run of expanded text and where it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Segment {
    /// Start in the expanded text.
    out_start: usize,
    /// File it came from.
    file: FileId,
    /// Start in that file.
    src_start: usize,
    /// For macro output: the length of the macro use in the file; the whole
    /// segment maps to that one span. `None` for verbatim text.
    macro_len: Option<usize>,
}

/// The preprocessor's output: one text plus the map back to the sources.
#[derive(Clone, Debug, Default)]
pub struct Expanded {
    /// The expanded program text.
    pub text: String,
    segments: Vec<Segment>,
    /// Non-fatal diagnostics (`#warning`).
    pub warnings: Vec<Diagnostic>,
}

impl Expanded {
    fn push_verbatim(&mut self, file: FileId, src: &str, range: std::ops::Range<usize>) {
        if range.is_empty() {
            return;
        }
        let out_start = self.text.len();
        // Merge with the previous segment when contiguous.
        let merge = matches!(self.segments.last(), Some(s) if s.macro_len.is_none()
            && s.file == file
            && s.src_start + (out_start - s.out_start) == range.start);
        if !merge {
            self.segments.push(Segment {
                out_start,
                file,
                src_start: range.start,
                macro_len: None,
            });
        }
        self.text.push_str(&src[range]);
    }

    fn push_macro(&mut self, file: FileId, use_range: std::ops::Range<usize>, text: &str) {
        if text.is_empty() {
            return;
        }
        self.segments.push(Segment {
            out_start: self.text.len(),
            file,
            src_start: use_range.start,
            macro_len: Some(use_range.len()),
        });
        self.text.push_str(text);
    }

    fn segment_at(&self, offset: usize) -> Option<&Segment> {
        let i = match self.segments.binary_search_by(|s| s.out_start.cmp(&offset)) {
            Ok(i) => i,
            Err(0) => return None,
            Err(i) => i - 1,
        };
        self.segments.get(i)
    }

    /// Maps an expanded offset to `(file, original offset)`.
    pub fn origin(&self, offset: usize) -> Option<(FileId, usize)> {
        let s = self.segment_at(offset)?;
        Some(match s.macro_len {
            None => (s.file, s.src_start + (offset - s.out_start)),
            Some(_) => (s.file, s.src_start),
        })
    }

    /// Maps an expanded byte range to a [`Span`] in the original file. A
    /// range that starts in one file and ends in another keeps only its start.
    pub fn span(&self, start: usize, end: usize) -> Span {
        let Some(seg) = self.segment_at(start) else {
            return Span::default();
        };
        let (file, src_start) = match seg.macro_len {
            None => (seg.file, seg.src_start + (start - seg.out_start)),
            Some(len) => {
                return Span::new(seg.file, seg.src_start as u32, (seg.src_start + len) as u32);
            }
        };
        let src_end = if end <= start {
            src_start
        } else {
            match self.segment_at(end - 1) {
                Some(e) if e.file == file => match e.macro_len {
                    None => e.src_start + (end - 1 - e.out_start) + 1,
                    Some(len) => e.src_start + len,
                },
                _ => src_start + 1,
            }
        };
        Span::new(file, src_start as u32, src_end.max(src_start) as u32)
    }
}

#[derive(Clone, Debug)]
struct Macro {
    /// `Some(params)` for a function-like macro.
    params: Option<Vec<String>>,
    body: String,
}

#[derive(Clone, Copy, Debug)]
struct Cond {
    /// Whether the current branch is being emitted.
    active: bool,
    /// Whether some branch of this conditional was already taken.
    taken: bool,
    /// Whether the enclosing region is active.
    parent_active: bool,
    /// `#else` seen.
    seen_else: bool,
    /// The `#if` line, for "unterminated" errors.
    span: Span,
}

/// Preprocesses `root` (already in `sources`), loading includes through
/// `loader` and adding them to `sources`. Errors are collected; when any
/// occurred the result is `Err` with all of them.
pub fn preprocess(
    sources: &mut SourceMap,
    root: FileId,
    loader: &mut dyn Loader,
) -> Result<Expanded, Vec<Diagnostic>> {
    let mut pp = Preprocessor {
        sources,
        loader,
        macros: HashMap::new(),
        out: Expanded::default(),
        errors: Vec::new(),
        once: HashSet::new(),
        include_stack: Vec::new(),
    };
    pp.file(root, None);
    let Preprocessor { out, errors, .. } = pp;
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

struct Preprocessor<'a> {
    sources: &'a mut SourceMap,
    loader: &'a mut dyn Loader,
    macros: HashMap<String, Macro>,
    out: Expanded,
    errors: Vec<Diagnostic>,
    /// Files that said `#pragma once`.
    once: HashSet<String>,
    /// Names of the files being processed (outermost first).
    include_stack: Vec<String>,
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl Preprocessor<'_> {
    fn error(&mut self, code: &str, message: impl Into<String>, span: Span, label: &str) {
        self.errors
            .push(Diagnostic::error(code, message).with_primary(span, label));
    }

    /// Processes one file; `include_site` is the `#include` directive's span.
    fn file(&mut self, file: FileId, include_site: Option<Span>) {
        let name = self.sources.file_name(file).to_owned();
        if self.include_stack.len() >= MAX_INCLUDE_DEPTH {
            let span = include_site.unwrap_or_default();
            self.error(
                codes::INCLUDE_DEPTH,
                format!("#include nested more than {MAX_INCLUDE_DEPTH} deep (recursive include of `{name}`?)"),
                span,
                "included here",
            );
            return;
        }
        self.include_stack.push(name);
        let text = self.sources.text(file).to_owned();
        let bytes = text.as_bytes();
        let mut conds: Vec<Cond> = Vec::new();
        let mut pos = 0;
        let mut in_comment: Option<usize> = None;
        // Inside a string literal left open at the end of the previous line
        // (a string runs to its closing quote, newlines included: P4_16
        // §6.4.3.3), so this line is neither a directive nor macro-expanded.
        let mut in_string = false;
        while pos < bytes.len() {
            // Start of a physical line.
            let line_end = memchr_newline(bytes, pos);
            let active = conds.last().is_none_or(|c| c.active);
            if in_comment.is_none() && !in_string {
                let first = skip_hspace(bytes, pos, line_end);
                if first < line_end && bytes[first] == b'#' {
                    // A directive: join continuation lines.
                    let (logical, next) = directive_line(&text, first + 1);
                    let span =
                        Span::new(file, first as u32, trim_end_pos(bytes, first, next) as u32);
                    self.directive(file, &logical, first + 1, span, &mut conds);
                    // Keep line structure so the expanded text stays readable.
                    if next > first && bytes[next - 1] == b'\n' {
                        self.out.push_verbatim(file, &text, next - 1..next);
                    }
                    pos = next;
                    continue;
                }
            }
            let next = (line_end + 1).min(bytes.len());
            let (comment, string, line_end) =
                self.text_line(file, &text, pos, next, (in_comment, in_string), active);
            in_comment = comment;
            in_string = string;
            pos = line_end.max(next);
        }
        if let Some(start) = in_comment {
            self.error(
                codes::UNTERMINATED_COMMENT,
                "unterminated block comment",
                Span::new(file, start as u32, start as u32 + 2),
                "comment starts here and never ends",
            );
        }
        for c in conds.iter().rev() {
            self.errors.push(
                Diagnostic::error(
                    codes::UNBALANCED_CONDITIONAL,
                    "unterminated conditional directive",
                )
                .with_primary(c.span, "this `#if` has no matching `#endif`"),
            );
        }
        self.include_stack.pop();
    }

    /// Copies (and macro-expands) one line of program text. `carry` is the
    /// block-comment and string state the line starts in; returns the same
    /// state at its end.
    fn text_line(
        &mut self,
        file: FileId,
        text: &str,
        start: usize,
        mut end: usize,
        carry: (Option<usize>, bool),
        active: bool,
    ) -> (Option<usize>, bool, usize) {
        let (mut in_comment, mut in_string) = carry;
        let bytes = text.as_bytes();
        let mut i = start;
        let mut run_start = start;
        let mut in_line_comment = false;
        while i < end {
            if in_line_comment {
                // The rest of the line is comment; a backslash-newline at its
                // end splices the next line onto it, comment and all.
                match splice_before(bytes, end) {
                    Some(backslash) if backslash >= i => {
                        if active {
                            self.out.push_verbatim(file, text, run_start..backslash);
                        }
                        run_start = end;
                        i = end;
                        end = (memchr_newline(bytes, end) + 1).min(bytes.len());
                    }
                    _ => i = end,
                }
                continue;
            }
            if in_string {
                let (e, closed) = string_rest(bytes, i, end, false);
                i = e;
                in_string = !closed;
                continue;
            }
            if in_comment.is_some() {
                if bytes[i] == b'*' && i + 1 < end && bytes[i + 1] == b'/' {
                    in_comment = None;
                    i += 2;
                } else {
                    i += 1;
                }
                continue;
            }
            let b = bytes[i];
            if b == b'/' && i + 1 < end && bytes[i + 1] == b'*' {
                in_comment = Some(i);
                i += 2;
            } else if b == b'/' && i + 1 < end && bytes[i + 1] == b'/' {
                in_line_comment = true;
                i += 2;
            } else if b == b'"' {
                in_string = true;
                i += 1;
            } else if let Some(after) = splice_after(bytes, i) {
                // Backslash-newline: the next physical line continues this one
                // (`{a, b, \` then `c}` is one field list), so neither byte
                // reaches the lexer and the next line is no directive.
                if active {
                    self.out.push_verbatim(file, text, run_start..i);
                }
                i = after;
                run_start = after;
                if i >= end {
                    end = (memchr_newline(bytes, i) + 1).min(bytes.len());
                }
            } else if is_ident_start(b) {
                let id_end = ident_end(bytes, i, end);
                let ident = &text[i..id_end];
                if active
                    && self.macros.contains_key(ident)
                    && let Some((expansion, use_end)) = self.expand_use(file, text, i, id_end)
                {
                    self.out.push_verbatim(file, text, run_start..i);
                    if self.out.text.len() + expansion.len() < MAX_EXPANDED_BYTES {
                        self.out.push_macro(file, i..use_end, &expansion);
                    }
                    i = use_end;
                    if i > end {
                        // The arguments ran over several lines: carry on to
                        // the end of the line where the call ends.
                        end = (memchr_newline(bytes, i) + 1).min(bytes.len());
                    }
                    run_start = i;
                    continue;
                }
                i = id_end;
            } else if b.is_ascii_digit() {
                // Skip numbers whole so `8w0x1F` never looks like identifier `w0x1F`.
                i = ident_end(bytes, i, end);
            } else {
                i += 1;
            }
        }
        if active && self.out.text.len() < MAX_EXPANDED_BYTES {
            self.out.push_verbatim(file, text, run_start..end);
        } else if !active && end > start && bytes[end - 1] == b'\n' {
            // Keep the line structure of skipped text (it maps nowhere useful
            // but keeps the expanded text's line count honest).
            self.out.push_verbatim(file, text, end - 1..end);
        }
        // Skipped text (`#if 0`) is not tokenised, so a stray quote there must
        // not hide the directives that follow.
        (in_comment, in_string && active, end)
    }

    /// Expands a macro used at `start..id_end` (a function-like macro's
    /// arguments may run over several lines). Returns the replacement text and where the use ends, or
    /// `None` when a function-like macro is named without `(`.
    fn expand_use(
        &mut self,
        file: FileId,
        text: &str,
        start: usize,
        id_end: usize,
    ) -> Option<(String, usize)> {
        let name = &text[start..id_end];
        let mac = self.macros.get(name)?.clone();
        let mut hide = vec![name.to_owned()];
        match &mac.params {
            None => {
                let out = self.expand_text(
                    &mac.body,
                    &mut hide,
                    0,
                    Span::new(file, start as u32, id_end as u32),
                );
                Some((out, id_end))
            }
            Some(params) => {
                let bytes = text.as_bytes();
                let open = skip_hspace(bytes, id_end, bytes.len());
                if open >= bytes.len() || bytes[open] != b'(' {
                    return None;
                }
                let span = Span::new(file, start as u32, id_end as u32);
                let Some((args, close)) = split_args(text, open, bytes.len()) else {
                    self.error(
                        codes::MACRO_EXPANSION,
                        format!("unterminated call of macro `{name}`: no closing `)`"),
                        span,
                        "macro used here",
                    );
                    return Some((String::new(), bytes.len()));
                };
                let out = self.call_macro(name, params, &mac.body, &args, &mut hide, 0, span);
                Some((out, close + 1))
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn call_macro(
        &mut self,
        name: &str,
        params: &[String],
        body: &str,
        args: &[String],
        hide: &mut Vec<String>,
        depth: usize,
        span: Span,
    ) -> String {
        let args: Vec<&str> = if args.len() == 1 && args[0].trim().is_empty() && params.is_empty() {
            Vec::new()
        } else {
            args.iter().map(|a| a.trim()).collect()
        };
        if args.len() != params.len() {
            self.error(
                codes::MACRO_EXPANSION,
                format!(
                    "macro `{name}` takes {} argument(s) but {} were given",
                    params.len(),
                    args.len()
                ),
                span,
                "macro used here",
            );
            return String::new();
        }
        // Arguments are fully expanded before substitution (C semantics).
        let expanded_args: Vec<String> = args
            .iter()
            .map(|a| {
                let mut h = hide.clone();
                h.pop();
                self.expand_text(a, &mut h, depth + 1, span)
            })
            .collect();
        let substituted = paste(&substitute(body, params, &expanded_args));
        self.expand_text(&substituted, hide, depth + 1, span)
    }

    /// Expands macros in `text` (a macro body), never re-expanding names in
    /// `hide`.
    fn expand_text(
        &mut self,
        text: &str,
        hide: &mut Vec<String>,
        depth: usize,
        span: Span,
    ) -> String {
        if depth > MAX_EXPANSION_DEPTH {
            self.error(
                codes::MACRO_EXPANSION,
                "macro expansion too deep (recursive macro?)",
                span,
                "expanded from here",
            );
            return String::new();
        }
        let bytes = text.as_bytes();
        let mut out = String::new();
        let mut i = 0;
        while i < bytes.len() {
            if out.len() > MAX_EXPANDED_BYTES {
                self.error(
                    codes::MACRO_EXPANSION,
                    "macro expansion too large",
                    span,
                    "expanded from here",
                );
                return String::new();
            }
            let b = bytes[i];
            if b == b'"' {
                let e = skip_string(bytes, i, bytes.len());
                out.push_str(&text[i..e]);
                i = e;
            } else if is_ident_start(b) {
                let e = ident_end(bytes, i, bytes.len());
                let ident = &text[i..e];
                let mac = if hide.iter().any(|h| h == ident) {
                    None
                } else {
                    self.macros.get(ident).cloned()
                };
                match mac {
                    Some(Macro { params: None, body }) => {
                        hide.push(ident.to_owned());
                        let r = self.expand_text(&body, hide, depth + 1, span);
                        hide.pop();
                        out.push_str(&r);
                        i = e;
                    }
                    Some(Macro {
                        params: Some(params),
                        body,
                    }) => {
                        let open = skip_hspace(bytes, e, bytes.len());
                        match (open < bytes.len() && bytes[open] == b'(')
                            .then(|| split_args(text, open, bytes.len()))
                            .flatten()
                        {
                            Some((args, close)) => {
                                hide.push(ident.to_owned());
                                let r = self.call_macro(
                                    ident,
                                    &params,
                                    &body,
                                    &args,
                                    hide,
                                    depth + 1,
                                    span,
                                );
                                hide.pop();
                                out.push_str(&r);
                                i = close + 1;
                            }
                            None => {
                                out.push_str(ident);
                                i = e;
                            }
                        }
                    }
                    None => {
                        out.push_str(ident);
                        i = e;
                    }
                }
            } else if b.is_ascii_digit() {
                let e = ident_end(bytes, i, bytes.len());
                out.push_str(&text[i..e]);
                i = e;
            } else {
                let ch_len = text[i..].chars().next().map_or(1, char::len_utf8);
                out.push_str(&text[i..i + ch_len]);
                i += ch_len;
            }
        }
        out
    }

    /// Handles one directive. `logical` is the text after `#` with
    /// continuations joined and comments removed; `at` is its offset.
    fn directive(
        &mut self,
        file: FileId,
        logical: &str,
        at: usize,
        span: Span,
        conds: &mut Vec<Cond>,
    ) {
        let trimmed = logical.trim_start();
        let lead = logical.len() - trimmed.len();
        let name_end = trimmed
            .bytes()
            .position(|b| !is_ident_char(b))
            .unwrap_or(trimmed.len());
        let name = &trimmed[..name_end];
        let rest = trimmed[name_end..].trim();
        let name_span = Span::new(file, (at + lead) as u32, (at + lead + name_end) as u32);
        let active = conds.last().is_none_or(|c| c.active);
        match name {
            "if" | "ifdef" | "ifndef" => {
                let value = if active {
                    match name {
                        "if" => self.eval_condition(rest, span),
                        "ifdef" | "ifndef" => {
                            let id = rest.split_whitespace().next().unwrap_or("");
                            if id.is_empty() || !id.bytes().all(is_ident_char) {
                                self.error(
                                    codes::MALFORMED_DIRECTIVE,
                                    format!("#{name} needs a macro name"),
                                    span,
                                    "expected a name here",
                                );
                            }
                            self.macros.contains_key(id) == (name == "ifdef")
                        }
                        _ => false,
                    }
                } else {
                    false
                };
                conds.push(Cond {
                    active: active && value,
                    taken: value,
                    parent_active: active,
                    seen_else: false,
                    span,
                });
            }
            "elif" | "else" => {
                let Some(top) = conds.last().copied() else {
                    self.error(
                        codes::UNBALANCED_CONDITIONAL,
                        format!("#{name} without #if"),
                        name_span,
                        "no open `#if` in this file",
                    );
                    return;
                };
                if top.seen_else {
                    self.error(
                        codes::UNBALANCED_CONDITIONAL,
                        format!("#{name} after #else"),
                        name_span,
                        "this conditional already had its #else",
                    );
                    return;
                }
                let value = if top.parent_active && !top.taken {
                    if name == "elif" {
                        self.eval_condition(rest, span)
                    } else {
                        true
                    }
                } else {
                    false
                };
                if let Some(c) = conds.last_mut() {
                    c.active = value;
                    c.taken |= value;
                    c.seen_else = name == "else";
                }
            }
            "endif" => {
                if conds.pop().is_none() {
                    self.error(
                        codes::UNBALANCED_CONDITIONAL,
                        "#endif without #if",
                        name_span,
                        "no open `#if` in this file",
                    );
                }
            }
            _ if !active => {}
            "define" => self.define(rest, span),
            "undef" => {
                let id = rest.split_whitespace().next().unwrap_or("");
                self.macros.remove(id);
            }
            "include" => self.include(file, rest, span),
            "error" => self.error(codes::ERROR_DIRECTIVE, format!("#error {rest}"), span, ""),
            "warning" => self.out.warnings.push(
                Diagnostic::warning(codes::ERROR_DIRECTIVE, format!("#warning {rest}"))
                    .with_primary(span, ""),
            ),
            "pragma" => {
                if rest.split_whitespace().next() == Some("once") {
                    let name = self.sources.file_name(file).to_owned();
                    self.once.insert(name);
                }
            }
            "line" | "" => {}
            _ if name.bytes().all(|b| b.is_ascii_digit()) => {} // `# 12 "file"` line markers
            _ => self.error(
                codes::UNKNOWN_DIRECTIVE,
                format!("unknown preprocessor directive `#{name}`"),
                name_span,
                "not a directive",
            ),
        }
    }

    fn define(&mut self, rest: &str, span: Span) {
        let bytes = rest.as_bytes();
        let end = ident_end(bytes, 0, bytes.len());
        if bytes.is_empty() || !is_ident_start(bytes[0]) {
            self.error(
                codes::MALFORMED_DIRECTIVE,
                "#define needs a macro name",
                span,
                "expected a name",
            );
            return;
        }
        let name = rest[..end].to_owned();
        let (params, body) = if end < bytes.len() && bytes[end] == b'(' {
            let Some(close) = rest[end..].find(')').map(|c| c + end) else {
                self.error(
                    codes::MALFORMED_DIRECTIVE,
                    format!("missing `)` in parameter list of macro `{name}`"),
                    span,
                    "",
                );
                return;
            };
            let params: Vec<String> = rest[end + 1..close]
                .split(',')
                .map(|p| p.trim().to_owned())
                .filter(|p| !p.is_empty())
                .collect();
            if let Some(bad) = params.iter().find(|p| !p.bytes().all(is_ident_char)) {
                self.error(
                    codes::MALFORMED_DIRECTIVE,
                    format!("invalid macro parameter `{bad}`"),
                    span,
                    "",
                );
                return;
            }
            (Some(params), rest[close + 1..].trim().to_owned())
        } else {
            (None, rest[end..].trim().to_owned())
        };
        self.macros.insert(name, Macro { params, body });
    }

    fn include(&mut self, file: FileId, rest: &str, span: Span) {
        let (target, angle) = match parse_include_target(rest) {
            Some(t) => t,
            None => {
                // `#include MACRO`: expand, then try again.
                let mut hide = Vec::new();
                let expanded = self.expand_text(rest, &mut hide, 0, span);
                match parse_include_target(expanded.trim()) {
                    Some(t) => t,
                    None => {
                        self.error(
                            codes::MALFORMED_DIRECTIVE,
                            "#include expects \"file\" or <file>",
                            span,
                            "",
                        );
                        return;
                    }
                }
            }
        };
        let from = self.sources.file_name(file).to_owned();
        let Some((name, text)) = self.loader.load(&target, angle, &from) else {
            self.error(
                codes::INCLUDE_NOT_FOUND,
                format!("cannot find include file `{target}`"),
                span,
                "included here",
            );
            return;
        };
        if self.once.contains(&name) {
            return;
        }
        // A UTF-8 byte-order mark is not part of the program.
        let text = match text.strip_prefix('\u{feff}') {
            Some(rest) => rest.to_owned(),
            None => text,
        };
        let id = self.sources.add(name, text);
        self.file(id, Some(span));
    }

    /// Evaluates an `#if`/`#elif` expression.
    fn eval_condition(&mut self, expr: &str, span: Span) -> bool {
        // Replace `defined X` / `defined(X)` first, then expand macros.
        let bytes = expr.as_bytes();
        let mut replaced = String::new();
        let mut i = 0;
        while i < bytes.len() {
            if is_ident_start(bytes[i]) {
                let e = ident_end(bytes, i, bytes.len());
                if &expr[i..e] == "defined" {
                    let mut j = skip_hspace(bytes, e, bytes.len());
                    let paren = j < bytes.len() && bytes[j] == b'(';
                    if paren {
                        j = skip_hspace(bytes, j + 1, bytes.len());
                    }
                    let ne = ident_end(bytes, j, bytes.len());
                    let name = &expr[j..ne];
                    let mut k = skip_hspace(bytes, ne, bytes.len());
                    if paren {
                        if k < bytes.len() && bytes[k] == b')' {
                            k += 1;
                        } else {
                            self.error(
                                codes::MALFORMED_DIRECTIVE,
                                "missing `)` after `defined(`",
                                span,
                                "",
                            );
                            return false;
                        }
                    }
                    if name.is_empty() {
                        self.error(
                            codes::MALFORMED_DIRECTIVE,
                            "`defined` needs a macro name",
                            span,
                            "",
                        );
                        return false;
                    }
                    replaced.push_str(if self.macros.contains_key(name) {
                        " 1 "
                    } else {
                        " 0 "
                    });
                    i = k;
                    continue;
                }
                replaced.push_str(&expr[i..e]);
                i = e;
            } else {
                let ch_len = expr[i..].chars().next().map_or(1, char::len_utf8);
                replaced.push_str(&expr[i..i + ch_len]);
                i += ch_len;
            }
        }
        let mut hide = Vec::new();
        let expanded = self.expand_text(&replaced, &mut hide, 0, span);
        match CondExpr::new(&expanded).eval() {
            Ok(v) => v != 0,
            Err(msg) => {
                self.error(
                    codes::MALFORMED_DIRECTIVE,
                    format!("invalid #if expression: {msg}"),
                    span,
                    "in this directive",
                );
                false
            }
        }
    }
}

/// `"name"` → (name, false); `<name>` → (name, true).
fn parse_include_target(rest: &str) -> Option<(String, bool)> {
    let rest = rest.trim();
    let (close, angle) = match rest.as_bytes().first()? {
        b'"' => ('"', false),
        b'<' => ('>', true),
        _ => return None,
    };
    let end = rest[1..].find(close)? + 1;
    let name = &rest[1..end];
    (!name.is_empty()).then(|| (name.to_owned(), angle))
}

/// Replaces parameter names in `body` by arguments (whole identifiers
/// outside strings only).
fn substitute(body: &str, params: &[String], args: &[String]) -> String {
    let bytes = body.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'"' {
            let e = skip_string(bytes, i, bytes.len());
            out.push_str(&body[i..e]);
            i = e;
        } else if is_ident_start(b) {
            let e = ident_end(bytes, i, bytes.len());
            let id = &body[i..e];
            match params.iter().position(|p| p == id) {
                Some(k) => out.push_str(&args[k]),
                None => out.push_str(id),
            }
            i = e;
        } else {
            let ch_len = body[i..].chars().next().map_or(1, char::len_utf8);
            out.push_str(&body[i..i + ch_len]);
            i += ch_len;
        }
    }
    out
}

/// Applies the `##` token-pasting operator: removes it and the whitespace
/// around it.
fn paste(s: &str) -> String {
    if !s.contains("##") {
        return s.to_owned();
    }
    let mut out = String::new();
    for (k, part) in s.split("##").enumerate() {
        if k == 0 {
            out.push_str(part.trim_end());
        } else {
            out.push_str(part.trim_start());
        }
    }
    out
}

/// Splits `( a, (b, c), "d,e" )` starting at `open` into argument texts;
/// returns them and the offset of the closing `)`.
fn split_args(text: &str, open: usize, end: usize) -> Option<(Vec<String>, usize)> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut args = Vec::new();
    let mut arg_start = open + 1;
    let mut i = open + 1;
    while i < end {
        match bytes[i] {
            b'"' => {
                i = skip_string(bytes, i, end);
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i = memchr_newline(bytes, i).min(end);
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = text[i + 2..end].find("*/").map_or(end, |p| i + 2 + p + 2);
                continue;
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' if depth == 0 => {
                args.push(text[arg_start..i].to_owned());
                return Some((args, i));
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                args.push(text[arg_start..i].to_owned());
                arg_start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn memchr_newline(bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |p| from + p)
}

fn skip_hspace(bytes: &[u8], mut i: usize, end: usize) -> usize {
    while i < end
        && (bytes[i] == b' ' || bytes[i] == b'\t' || bytes[i] == b'\r' || bytes[i] == 0x0c)
    {
        i += 1;
    }
    i
}

fn ident_end(bytes: &[u8], mut i: usize, end: usize) -> usize {
    while i < end && is_ident_char(bytes[i]) {
        i += 1;
    }
    i
}

/// When a backslash-newline (`\\` then `\n` or `\r\n`) starts at `i`, the
/// offset just past it: C's line splicing joins the two lines.
fn splice_after(bytes: &[u8], i: usize) -> Option<usize> {
    match bytes.get(i..)? {
        [b'\\', b'\n', ..] => Some(i + 2),
        [b'\\', b'\r', b'\n', ..] => Some(i + 3),
        _ => None,
    }
}

/// Where the backslash-newline that ends the physical line `..end` (`end`
/// just past its newline) starts, if it ends in one.
fn splice_before(bytes: &[u8], end: usize) -> Option<usize> {
    [2, 3]
        .into_iter()
        .filter_map(|back| end.checked_sub(back))
        .find(|&at| splice_after(bytes, at) == Some(end))
}

/// Skips the rest of a string literal from `j` (inside it) up to `end`;
/// returns where it stopped and whether that was past the closing quote.
/// With `stop_at_newline`, an unterminated one also stops at a newline.
fn string_rest(bytes: &[u8], mut j: usize, end: usize, stop_at_newline: bool) -> (usize, bool) {
    while j < end {
        match bytes[j] {
            b'\\' => j += 2,
            b'"' => return (j + 1, true),
            b'\n' if stop_at_newline => return (j, false),
            _ => j += 1,
        }
    }
    (end, false)
}

/// Skips a string literal starting at `i` (the `"`); stops at `end` or at a
/// newline when unterminated (the lexer reports that).
fn skip_string(bytes: &[u8], i: usize, end: usize) -> usize {
    string_rest(bytes, i + 1, end, true).0
}

fn trim_end_pos(bytes: &[u8], start: usize, mut end: usize) -> usize {
    while end > start && bytes[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    end
}

/// Reads a directive's logical line starting after `#`: joins
/// backslash-newlines and drops comments (a block comment may continue the
/// line). Returns the text (each comment replaced by a space) and the
/// offset just past the line's newline.
fn directive_line(text: &str, start: usize) -> (String, usize) {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut i = start;
    while i < bytes.len() {
        let b = bytes[i];
        if let Some(after) = splice_after(bytes, i) {
            i = after;
            out.push(' ');
        } else if b == b'\n' {
            return (out, i + 1);
        } else if b == b'/' && bytes.get(i + 1) == Some(&b'/') {
            let nl = memchr_newline(bytes, i);
            return (out, (nl + 1).min(bytes.len()));
        } else if b == b'/' && bytes.get(i + 1) == Some(&b'*') {
            match text[i + 2..].find("*/") {
                Some(p) => i = i + 2 + p + 2,
                None => return (out, bytes.len()),
            }
            out.push(' ');
        } else if b == b'"' {
            let e = skip_string(bytes, i, bytes.len());
            out.push_str(&text[i..e]);
            i = e;
        } else {
            let ch_len = text[i..].chars().next().map_or(1, char::len_utf8);
            out.push_str(&text[i..i + ch_len]);
            i += ch_len;
        }
    }
    (out, bytes.len())
}

/// A tiny evaluator for `#if` expressions (C precedence, `i64`,
/// wrapping arithmetic; unknown identifiers are 0).
struct CondExpr<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
}

impl<'a> CondExpr<'a> {
    fn new(s: &'a str) -> Self {
        CondExpr {
            s: s.as_bytes(),
            i: 0,
            depth: 0,
        }
    }

    fn eval(mut self) -> Result<i64, String> {
        let v = self.ternary()?;
        self.ws();
        if self.i < self.s.len() {
            return Err(format!("unexpected `{}`", self.s[self.i] as char));
        }
        Ok(v)
    }

    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn eat(&mut self, op: &str) -> bool {
        self.ws();
        if self.s[self.i..].starts_with(op.as_bytes()) {
            // Do not take `<` out of `<<`/`<=` etc.
            let next = self.s.get(self.i + op.len()).copied();
            let ambiguous = matches!(
                (op, next),
                ("<", Some(b'<' | b'='))
                    | (">", Some(b'>' | b'='))
                    | ("&", Some(b'&'))
                    | ("|", Some(b'|'))
                    | ("!", Some(b'='))
            );
            if !ambiguous {
                self.i += op.len();
                return true;
            }
        }
        false
    }

    fn ternary(&mut self) -> Result<i64, String> {
        self.depth += 1;
        if self.depth > 200 {
            return Err("expression too deep".into());
        }
        let c = self.binary(0)?;
        let r = if self.eat("?") {
            let a = self.ternary()?;
            if !self.eat(":") {
                return Err("expected `:`".into());
            }
            let b = self.ternary()?;
            if c != 0 { a } else { b }
        } else {
            c
        };
        self.depth -= 1;
        Ok(r)
    }

    fn binary(&mut self, level: usize) -> Result<i64, String> {
        const LEVELS: &[&[&str]] = &[
            &["||"],
            &["&&"],
            &["|"],
            &["^"],
            &["&"],
            &["==", "!="],
            &["<=", ">=", "<", ">"],
            &["<<", ">>"],
            &["+", "-"],
            &["*", "/", "%"],
        ];
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut lhs = self.binary(level + 1)?;
        'outer: loop {
            for op in LEVELS[level] {
                if self.eat(op) {
                    let rhs = self.binary(level + 1)?;
                    lhs = match *op {
                        "||" => ((lhs != 0) || (rhs != 0)) as i64,
                        "&&" => ((lhs != 0) && (rhs != 0)) as i64,
                        "|" => lhs | rhs,
                        "^" => lhs ^ rhs,
                        "&" => lhs & rhs,
                        "==" => (lhs == rhs) as i64,
                        "!=" => (lhs != rhs) as i64,
                        "<=" => (lhs <= rhs) as i64,
                        ">=" => (lhs >= rhs) as i64,
                        "<" => (lhs < rhs) as i64,
                        ">" => (lhs > rhs) as i64,
                        "<<" => lhs.wrapping_shl(rhs as u32),
                        ">>" => lhs.wrapping_shr(rhs as u32),
                        "+" => lhs.wrapping_add(rhs),
                        "-" => lhs.wrapping_sub(rhs),
                        "*" => lhs.wrapping_mul(rhs),
                        "/" | "%" if rhs == 0 => return Err("division by zero".into()),
                        "/" => lhs.wrapping_div(rhs),
                        _ => lhs.wrapping_rem(rhs),
                    };
                    continue 'outer;
                }
            }
            return Ok(lhs);
        }
    }

    fn unary(&mut self) -> Result<i64, String> {
        self.depth += 1;
        if self.depth > 200 {
            return Err("expression too deep".into());
        }
        let r = if self.eat("!") {
            Ok((self.unary()? == 0) as i64)
        } else if self.eat("~") {
            Ok(!self.unary()?)
        } else if self.eat("-") {
            Ok(self.unary()?.wrapping_neg())
        } else if self.eat("+") {
            self.unary()
        } else if self.eat("(") {
            let v = self.ternary()?;
            if !self.eat(")") {
                return Err("expected `)`".into());
            }
            Ok(v)
        } else {
            self.atom()
        };
        self.depth -= 1;
        r
    }

    fn atom(&mut self) -> Result<i64, String> {
        self.ws();
        let start = self.i;
        while self.i < self.s.len() && is_ident_char(self.s[self.i]) {
            self.i += 1;
        }
        let tok = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
        if tok.is_empty() {
            return Err(match self.s.get(self.i) {
                Some(c) => format!("unexpected `{}`", *c as char),
                None => "expected a value".into(),
            });
        }
        if !tok.as_bytes()[0].is_ascii_digit() {
            return Ok(0); // an undefined identifier
        }
        let digits = tok.trim_end_matches(['u', 'U', 'l', 'L']);
        let parsed = if let Some(h) = digits
            .strip_prefix("0x")
            .or_else(|| digits.strip_prefix("0X"))
        {
            i64::from_str_radix(h, 16)
        } else if digits.len() > 1 && digits.starts_with('0') {
            i64::from_str_radix(&digits[1..], 8)
        } else {
            digits.parse::<i64>()
        };
        parsed.map_err(|_| format!("invalid number `{tok}`"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(files: &[(&str, &str)]) -> (SourceMap, Result<Expanded, Vec<Diagnostic>>) {
        let mut loader = MemLoader::default();
        for (n, t) in &files[1..] {
            loader.files.insert((*n).to_owned(), (*t).to_owned());
        }
        let mut map = SourceMap::new();
        let root = map.add(files[0].0, files[0].1);
        let r = preprocess(&mut map, root, &mut loader);
        (map, r)
    }

    fn expand(src: &str) -> String {
        let (_, r) = run(&[("t.p4", src)]);
        r.expect("no errors").text
    }

    fn squash(s: &str) -> String {
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn object_and_function_macros_expand() {
        let out = expand("#define W 8\n#define ADD(a, b) ((a) + (b))\nbit<W> x = ADD(W, 2);\n");
        assert_eq!(squash(&out), "bit<8> x = ((8) + (2));");
        let out = expand("#define W(n) n ## w0\nW(8)\n");
        assert_eq!(squash(&out), "8w0");
    }

    #[test]
    fn macro_arguments_may_span_lines() {
        let (map, r) = run(&[(
            "m.p4",
            "#define ADD(a, b) ((a) + (b))\nx = ADD(1, // one)\n  2) + y;\nz\n",
        )]);
        let out = r.expect("ok");
        assert_eq!(squash(&out.text), "x = ((1) + (// one) 2)) + y; z");
        let at = out.text.find('z').expect("z");
        assert_eq!(map.location(out.span(at, at + 1)), "m.p4:4:1");
        let (_, r) = run(&[("m.p4", "#define F(a) a\nF(1\n")]);
        assert_eq!(r.expect_err("unterminated")[0].code, codes::MACRO_EXPANSION);
    }

    #[test]
    fn a_string_over_several_lines_holds_no_directive() {
        // P4_16 §6.4.3.3: a string runs to its closing quote, newlines too.
        let out = expand("#define S 1\n@n(\"a\n#define S 2\nS /* \\\"\n\") S\n");
        assert_eq!(squash(&out), "@n(\"a #define S 2 S /* \\\" \") 1");
        // A stray quote in skipped text opens no string.
        let out = expand("#if 0\ndon\"t\n#endif\nS\n");
        assert_eq!(squash(&out), "S");
    }

    #[test]
    fn macros_do_not_expand_in_strings_comments_or_recursively() {
        let out = expand("#define A A + B\n#define B 1\n\"A\" // A\nA\n");
        assert_eq!(squash(&out), "\"A\" // A A + 1");
    }

    #[test]
    fn conditionals_pick_the_right_branch() {
        let src = "#define V 20200408\n#if V >= 20200408 && defined(V)\nnew\n#elif 1\nmid\n#else\nold\n#endif\n#ifndef V\nno\n#endif\n#ifdef V\nyes\n#endif\n";
        assert_eq!(squash(&expand(src)), "new yes");
        let src = "#if 0\n#if 1\na\n#endif\n#elif !defined X\nb\n#else\nc\n#endif\n";
        assert_eq!(squash(&expand(src)), "b");
    }

    #[test]
    fn undef_and_continuation_lines() {
        let src = "#define L 1 + \\\n 2\nL\n#undef L\nL\n";
        assert_eq!(squash(&expand(src)), "1 + 2 L");
    }

    #[test]
    fn backslash_newline_splices_program_text_and_line_comments() {
        // A field list run over two lines, a macro used after the splice,
        // and a `#` that starts no directive once its line is spliced on.
        let src = "#define N 7\n{a, \\\nN}\nx \\\r\n#define M 1\nM\n";
        assert_eq!(squash(&expand(src)), "{a, 7} x #define M 1 M");
        // A line comment ending in a backslash swallows the next line.
        let (map, r) = run(&[("main.p4", "// gone \\\nalso gone\nkept\n")]);
        let out = r.expect("ok");
        assert_eq!(squash(&out.text), "// gone also gone kept");
        let at = out.text.find("kept").expect("present");
        assert_eq!(map.location(out.span(at, at + 4)), "main.p4:3:1");
    }

    #[test]
    fn include_guard_includes_once_and_maps_back() {
        let (map, r) = run(&[
            (
                "main.p4",
                "#include \"h.p4\"\n#include \"h.p4\"\nmain_tok\n",
            ),
            ("h.p4", "#ifndef H\n#define H\nheader_tok\n#endif\n"),
        ]);
        let out = r.expect("ok");
        assert_eq!(squash(&out.text), "header_tok main_tok");
        let at = out.text.find("header_tok").expect("present");
        let span = out.span(at, at + 10);
        assert_eq!(map.file_name(span.file), "h.p4");
        assert_eq!(map.snippet(span), "header_tok");
        let at = out.text.find("main_tok").expect("present");
        let span = out.span(at, at + 8);
        assert_eq!(map.location(span), "main.p4:3:1");
    }

    #[test]
    fn macro_output_maps_to_the_use_site() {
        let (map, r) = run(&[("m.p4", "#define T bit<8>\nconst T x = 1;\n")]);
        let out = r.expect("ok");
        let at = out.text.find("bit").expect("expanded");
        let span = out.span(at, at + 3);
        assert_eq!(map.snippet(span), "T");
        assert_eq!(map.location(span), "m.p4:2:7");
    }

    #[test]
    fn builtin_includes_are_found() {
        let out = expand("#include <v1model.p4>\n");
        assert!(out.contains("package V1Switch"));
        assert!(out.contains("extern packet_in"));
        assert!(out.contains("__v1model_version = 20180101"));
        assert!(
            !out.contains("extern counter<I>") && !out.contains("typedef bit<9> PortId_t"),
            "p4c's default, the 20180101 form, is chosen"
        );
        let out = expand("#define V1MODEL_VERSION 20200408\n#include <v1model.p4>\n");
        assert!(out.contains("extern counter<I>") && out.contains("typedef bit<9> PortId_t"));
    }

    #[test]
    fn errors_point_at_the_directive() {
        let (map, r) = run(&[("e.p4", "ok\n#endif\n")]);
        let errs = r.expect_err("error");
        assert_eq!(errs[0].code, codes::UNBALANCED_CONDITIONAL);
        assert_eq!(
            map.location(errs[0].primary_span().expect("span")),
            "e.p4:2:2"
        );

        let (_, r) = run(&[("e.p4", "#if 1\n")]);
        assert_eq!(r.expect_err("error")[0].code, codes::UNBALANCED_CONDITIONAL);
        let (_, r) = run(&[("e.p4", "#frobnicate\n")]);
        assert_eq!(r.expect_err("error")[0].code, codes::UNKNOWN_DIRECTIVE);
        let (_, r) = run(&[("e.p4", "#include \"nope.p4\"\n")]);
        assert_eq!(r.expect_err("error")[0].code, codes::INCLUDE_NOT_FOUND);
        let (map, r) = run(&[("e.p4", "a\n  /* never\n")]);
        let errs = r.expect_err("error");
        assert_eq!(errs[0].code, codes::UNTERMINATED_COMMENT);
        assert_eq!(
            map.location(errs[0].primary_span().expect("span")),
            "e.p4:2:3"
        );
        let (_, r) = run(&[("e.p4", "#if 1 +\n#endif\n")]);
        assert_eq!(r.expect_err("error")[0].code, codes::MALFORMED_DIRECTIVE);
    }

    #[test]
    fn recursion_is_bounded() {
        let (_, r) = run(&[
            ("a.p4", "#include \"a.p4\"\n"),
            ("a.p4", "#include \"a.p4\"\n"),
        ]);
        assert_eq!(r.expect_err("error")[0].code, codes::INCLUDE_DEPTH);
        let (_, r) = run(&[("m.p4", "#define F(x) F(x) F(x)\nF(1)\n")]);
        // Self-reference is hidden (C semantics): no blow-up, no error.
        assert!(r.is_ok());
        let (_, r) = run(&[("m.p4", "#define A B B\n#define B A A\nA\n")]);
        assert!(r.is_ok());
    }

    #[test]
    fn directives_inside_comments_are_text() {
        let out = expand("/* start\n#error no\n*/ x\n");
        assert!(out.contains("#error no"));
    }
}
