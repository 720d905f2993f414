//! Front end: preprocessor, lexer and parser, producing the [`ast`] with
//! spans into the original files.
//!
//! Pipeline: [`preprocess`] (includes, macros, conditionals; keeps a map
//! back to the original text) → [`lexer`] → [`parser`] → [`ast::Program`].
//! Entry points: [`parse_program`] for a file on disk, [`parse_file`] when
//! the caller also needs the [`SourceMap`] to render errors, and
//! [`parse_source`] for text in memory (tests, fuzzing).
//!
//! Contract: no entry point panics, on any input. Errors come back as
//! [`Diagnostic`]s whose spans point into the file the user wrote (inside an
//! `#include`d file when that is where the problem is). The preprocessor,
//! the lexer and the parser each stop the pipeline when they report an
//! error, so later stages never see garbage from earlier ones. Implements
//! P4_16 §6.2 (preprocessing), §6.4 (lexical structure) and Appendix H
//! (grammar).

pub mod ast;
pub mod lexer;
pub mod parser;
pub mod preprocess;

use std::path::{Path, PathBuf};

use crate::diag::{Diagnostic, SourceMap, codes};
use preprocess::{FsLoader, Loader, MemLoader};

/// Everything a front-end run produces.
#[derive(Debug)]
pub struct Parsed {
    /// The program; `None` when an error stopped the front end.
    pub program: Option<ast::Program>,
    /// All files read (the root first, then includes in order).
    pub sources: SourceMap,
    /// Errors and warnings, in the order found.
    pub diagnostics: Vec<Diagnostic>,
}

impl Parsed {
    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// Renders every diagnostic, colour off.
    pub fn render(&self) -> String {
        crate::diag::render_all(&self.diagnostics, &self.sources)
    }
}

/// Parses the P4 program in `path`. `#include <f>` searches `include_dirs`
/// in order, then the built-in `core.p4`/`v1model.p4`; `#include "f"` looks
/// next to the including file first. On error, the diagnostics come back
/// without the source map; use [`parse_file`] to be able to render them.
pub fn parse_program(
    path: &Path,
    include_dirs: &[PathBuf],
) -> Result<(ast::Program, SourceMap), Vec<Diagnostic>> {
    let parsed = parse_file(path, include_dirs);
    match parsed.program {
        Some(p) if !parsed.diagnostics.iter().any(Diagnostic::is_error) => Ok((p, parsed.sources)),
        _ => Err(parsed.diagnostics),
    }
}

/// As [`parse_program`], returning the source map along with the
/// diagnostics.
pub fn parse_file(path: &Path, include_dirs: &[PathBuf]) -> Parsed {
    let mut sources = SourceMap::new();
    let name = path.to_string_lossy().into_owned();
    let text = match std::fs::read(path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(_) => {
                return Parsed {
                    program: None,
                    sources,
                    diagnostics: vec![Diagnostic::error(
                        codes::IO,
                        format!("`{name}` is not valid UTF-8"),
                    )],
                };
            }
        },
        Err(e) => {
            return Parsed {
                program: None,
                sources,
                diagnostics: vec![Diagnostic::error(
                    codes::IO,
                    format!("cannot read `{name}`: {e}"),
                )],
            };
        }
    };
    let mut loader = FsLoader {
        include_dirs: include_dirs.to_vec(),
    };
    run(&mut sources, name, text, &mut loader)
}

/// Parses `text` as if it were a file called `name`. Includes resolve to the
/// built-in `core.p4` and `v1model.p4` only.
pub fn parse_source(name: &str, text: &str) -> Parsed {
    parse_sources(name, text, &[])
}

/// Parses `text` as file `name`, with `files` (name, text) available to
/// `#include` (then the built-ins).
pub fn parse_sources(name: &str, text: &str, files: &[(&str, &str)]) -> Parsed {
    let mut loader = MemLoader::default();
    for (n, t) in files {
        loader.files.insert((*n).to_owned(), (*t).to_owned());
    }
    let mut sources = SourceMap::new();
    run(&mut sources, name.to_owned(), text.to_owned(), &mut loader)
}

fn run(sources: &mut SourceMap, name: String, text: String, loader: &mut dyn Loader) -> Parsed {
    let text = match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_owned(),
        None => text,
    };
    let root = sources.add(name, text);
    let take = |sources: &mut SourceMap| std::mem::take(sources);
    let expanded = match preprocess::preprocess(sources, root, loader) {
        Ok(e) => e,
        Err(diagnostics) => {
            return Parsed {
                program: None,
                sources: take(sources),
                diagnostics,
            };
        }
    };
    let mut diagnostics = expanded.warnings.clone();
    let (tokens, lex_diags) = lexer::lex(&expanded);
    if !lex_diags.is_empty() {
        diagnostics.extend(lex_diags);
        return Parsed {
            program: None,
            sources: take(sources),
            diagnostics,
        };
    }
    let (program, parse_diags) = parser::parse_tokens(&tokens, &expanded.text);
    let failed = parse_diags.iter().any(Diagnostic::is_error);
    diagnostics.extend(parse_diags);
    Parsed {
        program: (!failed).then_some(program),
        sources: take(sources),
        diagnostics,
    }
}

#[cfg(test)]
mod tests;
