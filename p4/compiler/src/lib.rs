//! `p4-compiler`: P4_16 (v1model) to Rust.
//!
//! Stages, each handing one artefact to the next: [`front`] (preprocessor,
//! lexer, parser → AST with spans), [`check`] (names, types, widths → IR and
//! `ProgramInfo`), [`back`] (Rust code and P4Info). [`diag`] renders errors.
#![warn(missing_docs, unreachable_pub)]

pub mod back;
pub mod check;
pub mod diag;
pub mod front;
pub mod ir;
pub mod proc;
pub mod stf_harness;
