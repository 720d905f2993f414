//! Front end (in progress).
pub mod ast;
