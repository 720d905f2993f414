//! `p4-compiler`: P4_16 (v1model) to Rust.
//!
//! Stages, each handing one artefact to the next: [`front`] (preprocessor,
//! lexer, parser → AST with spans), [`check`] (names, types, widths → the
//! [`ir`] and a `ProgramInfo`), [`back`] (Rust code and P4Info). [`diag`]
//! renders errors.
//!
//! The IR ([`ir::Program`]) holds declarations in arenas addressed by typed
//! handles; every expression carries its type with a concrete width, and
//! every name is resolved. Controls are kept as declarations plus
//! *instances* (one per instantiation path), which is how p4c names tables
//! and externs in P4Info and how the Rust back end indexes the runtime.
//!
//! Entry point: [`compile`]. It never panics on bad input: every problem is
//! a [`diag::Diagnostic`] with a stable code.
#![warn(missing_docs, unreachable_pub)]

pub mod back;
pub mod bundle_build;
pub mod check;
pub mod diag;
pub mod front;
pub mod ir;
pub mod proc;
pub mod stf_harness;
pub mod switch_crate;
pub mod v1model;

use std::path::{Path, PathBuf};

use diag::{Diagnostic, SourceMap};

/// Options of [`compile`].
#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    /// Directories searched by `#include <...>` before the built-in
    /// `core.p4` / `v1model.p4`.
    pub include_dirs: Vec<PathBuf>,
    /// Leaves the packet-trace points (issue #16) out of the generated
    /// code: a traced packet then shows only what the switch around the
    /// program records (the traffic manager), and an untraced one saves the
    /// one branch each point costs. For builds that want the last few
    /// percent, and for the benchmark that measures what the points cost.
    pub without_trace_points: bool,
}

/// Everything a successful compilation produces.
#[derive(Clone, Debug)]
pub struct CompileOutput {
    /// The generated Rust source, to be `include!`d inside a module.
    pub rust: String,
    /// P4Info in protobuf text format.
    pub p4info_text: String,
    /// P4Info in protobuf binary format.
    pub p4info_binary: Vec<u8>,
    /// Warnings (never errors).
    pub warnings: Vec<Diagnostic>,
    /// User-defined externs the generated code needs a Rust implementation
    /// of (see `back::rust::user_externs`); empty for most programs.
    pub user_externs: Vec<back::rust::RequiredExtern>,
}

/// Compiles the v1model program at `path` to Rust.
pub fn compile(path: &Path, opts: &CompileOptions) -> Result<CompileOutput, Vec<Diagnostic>> {
    compile_with_sources(path, opts).0
}

/// As [`compile`], also returning the source files read, which
/// [`render`] needs to show diagnostics.
pub fn compile_with_sources(
    path: &Path,
    opts: &CompileOptions,
) -> (Result<CompileOutput, Vec<Diagnostic>>, SourceMap) {
    let parsed = front::parse_file(path, &opts.include_dirs);
    let sources = parsed.sources;
    let Some(ast) = parsed.program else {
        return (Err(parsed.diagnostics), sources);
    };
    let mut warnings: Vec<Diagnostic> = parsed.diagnostics;
    if warnings.iter().any(Diagnostic::is_error) {
        return (Err(warnings), sources);
    }
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "program".into());
    let model_files = sources.files_named("v1model.p4");
    let (ir, info, more) = match check::check(&ast, &name, &model_files) {
        Ok(r) => r,
        Err(mut d) => {
            warnings.append(&mut d);
            return (Err(warnings), sources);
        }
    };
    warnings.extend(more);
    let p4info_text = back::p4info::p4info_text(&info);
    let p4info_binary = back::p4info::p4info_binary(&info);
    let rust_opts = back::rust::RustOptions {
        trace_points: !opts.without_trace_points,
    };
    match back::rust::write_with(&ir, &info, &p4info_text, &rust_opts) {
        Ok((rust, user_externs)) => (
            Ok(CompileOutput {
                rust,
                p4info_text,
                p4info_binary,
                warnings,
                user_externs,
            }),
            sources,
        ),
        Err(e) => {
            let code = if e.message.starts_with("not supported yet") {
                check::codes::UNSUPPORTED
            } else {
                diag::codes::BUG
            };
            let mut d = if code == diag::codes::BUG {
                Diagnostic::bug(e.message)
            } else {
                Diagnostic::error(code, e.message)
            };
            if let Some(s) = e.span {
                d = d.with_primary(s, "here");
            }
            warnings.push(d);
            (Err(warnings), sources)
        }
    }
}

/// Renders diagnostics as text, colour off.
pub fn render(diagnostics: &[Diagnostic], sources: &SourceMap) -> String {
    diag::render_all(diagnostics, sources)
}
