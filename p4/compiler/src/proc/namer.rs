//! Rust identifiers for P4 names.
//!
//! Contract: [`Namer::fresh`] returns an identifier that is a valid Rust
//! identifier (keywords become raw identifiers, `self`/`Self`/`super`/
//! `crate`/`_` get a trailing underscore), differs from every identifier it
//! returned before in the same namer, and is stable for a given sequence of
//! calls, so generated code is deterministic. [`escape`] only fixes keywords
//! and is for names whose uniqueness the P4 scoping already guarantees
//! (struct fields, enum variants).

use std::collections::HashSet;

/// Strict and reserved Rust keywords (2024 edition).
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "dyn", "else", "enum", "extern", "false",
    "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "static", "struct", "trait", "true", "type", "unsafe", "use", "where",
    "while", "abstract", "become", "box", "do", "final", "macro", "override", "priv", "try",
    "typeof", "unsized", "virtual", "yield",
];

/// Keywords that cannot be raw identifiers.
const NOT_RAW: &[&str] = &["self", "Self", "super", "crate", "_"];

/// Makes `name` a valid Rust identifier without renaming it otherwise.
pub fn escape(name: &str) -> String {
    if NOT_RAW.contains(&name) {
        format!("{name}_")
    } else if KEYWORDS.contains(&name) {
        format!("r#{name}")
    } else {
        name.to_string()
    }
}

/// The Rust field of a P4 struct or header field: `valid` is taken by the
/// validity bit, and an array element `a[3]` (arrays of scalars are their
/// elements) is `a__3`. The checker refuses two fields with one Rust name.
pub fn field_ident(name: &str) -> String {
    if name == "valid" {
        "valid_".to_string()
    } else if let Some((array, index)) = name.strip_suffix(']').and_then(|n| n.split_once('[')) {
        format!("{array}__{index}")
    } else {
        escape(name)
    }
}

/// A file stem as lower-case identifier text: ASCII letters lower-cased, digits kept,
/// everything else `_` (`basic-Router` → `basic_router`). Callers add the prefix or
/// suffix that makes it a crate or module name.
pub fn lower_snake(stem: &str) -> String {
    stem.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// Hands out unique Rust identifiers within one scope.
#[derive(Debug, Default, Clone)]
pub struct Namer {
    used: HashSet<String>,
}

impl Namer {
    /// A namer that will never return any of `reserved`.
    pub fn with_reserved(reserved: &[&str]) -> Self {
        Namer {
            used: reserved.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// A unique identifier derived from `base` (dots and other characters
    /// that Rust does not allow become `_`).
    pub fn fresh(&mut self, base: &str) -> String {
        let mut clean: String = base
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if clean.is_empty() || clean.starts_with(|c: char| c.is_ascii_digit()) {
            clean.insert(0, '_');
        }
        // Generated code names its own temporaries `..__`; P4 names never
        // end that way in the output.
        if clean.ends_with("__") {
            clean.push('x');
        }
        let clean = escape(&clean);
        let mut candidate = clean.clone();
        let mut n = 1;
        while self.used.contains(&candidate) {
            candidate = format!("{}_{n}", clean.trim_start_matches("r#"));
            n += 1;
        }
        self.used.insert(candidate.clone());
        candidate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lower_snake_keeps_letters_and_digits_only() {
        assert_eq!(lower_snake("basic-Router.v2"), "basic_router_v2");
        assert_eq!(lower_snake("1ok"), "1ok");
    }

    #[test]
    fn keywords_become_raw_or_suffixed() {
        assert_eq!(escape("type"), "r#type");
        assert_eq!(escape("self"), "self_");
        assert_eq!(escape("ttl"), "ttl");
    }

    #[test]
    fn fresh_names_never_collide() {
        let mut n = Namer::with_reserved(&["rt"]);
        assert_eq!(n.fresh("rt"), "rt_1");
        assert_eq!(n.fresh("MyIngress.ipv4_lpm"), "MyIngress_ipv4_lpm");
        assert_eq!(n.fresh("MyIngress_ipv4_lpm"), "MyIngress_ipv4_lpm_1");
        assert_eq!(n.fresh("match"), "r#match");
        assert_eq!(n.fresh("match"), "match_1");
        assert_eq!(n.fresh("1x"), "_1x");
        assert_eq!(n.fresh("tmp__"), "tmp__x");
    }
}
