//! Front end: preprocessor, lexer and parser, producing the [`ast`] with
//! spans into the original files (P4_16 spec Appendix H grammar; the
//! preprocessor follows the subset of C's described in P4_16 §6.2).
pub mod ast;
pub mod preprocess;
pub mod lexer;
