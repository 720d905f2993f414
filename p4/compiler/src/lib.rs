//! `p4-compiler`: P4_16 (v1model) to Rust.
#![warn(missing_docs, unreachable_pub)]
