//! Lexer: preprocessed P4_16 text to tokens (P4_16 §6.4 "Lexical
//! constructs", Appendix H tokens).
//!
//! Contract: every token carries its byte range in the *expanded* text
//! (`lo..hi`, used for adjacency checks such as `>` `>` forming a shift and
//! for annotation bodies) and its [`Span`] in the original file (via
//! [`Expanded::span`]). Keywords are not distinguished here: they are
//! [`Tok::Ident`]s, because several are contextual (`apply`, `key`,
//! `actions`, `entries`, `state`, `type`...); the parser decides. `>>` is
//! never one token, so `bit<bit<8>>` closes two type-argument lists; the
//! parser rebuilds the shift from two adjacent `>`. Never panics; malformed
//! input yields diagnostics and the lexer carries on with the next byte.

use crate::diag::{Diagnostic, Span, codes};
use crate::front::ast::IntLit;
use crate::front::preprocess::Expanded;

/// A token kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    /// Identifier or keyword.
    Ident(String),
    /// Integer literal, decoded.
    Int(IntLit),
    /// String literal, escapes decoded.
    Str(String),
    /// Punctuation or operator, as written (`(`, `&&&`, `|+|`, `..`...).
    Punct(&'static str),
    /// End of input.
    Eof,
}

/// A token with its positions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// What it is.
    pub tok: Tok,
    /// Start in the expanded text.
    pub lo: usize,
    /// End in the expanded text.
    pub hi: usize,
    /// Where it is in the original source.
    pub span: Span,
}

/// Operators and punctuation, longest first so the scan is greedy.
///
/// Compound assignments are tokens of their own (`+=`, `<<=`, `|+|=`...),
/// except `>>=`, which is `>` followed by `>=` (as `>>` is two `>`, so that
/// `register<bit<8>>` closes two type argument lists).
const PUNCTS: &[&str] = &[
    "{#}", "|+|=", "|-|=", "&&&", "|+|", "|-|", "...", "<<=", "&&", "||", "==", "!=", "<=", ">=",
    "<<", "++", "..", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "(", ")", "{", "}", "[", "]",
    "<", ">", ";", ":", ",", ".", "?", "@", "=", "+", "-", "*", "/", "%", "&", "|", "^", "~", "!",
];

/// Largest width accepted in a width-prefixed literal (`2048w0`): the
/// widest type the checker accepts.
pub const MAX_LITERAL_WIDTH: u32 = crate::check::MAX_WIDTH;

/// Lexes the whole expanded text. Returns the tokens (always ending with
/// [`Tok::Eof`]) and any diagnostics.
pub fn lex(expanded: &Expanded) -> (Vec<Token>, Vec<Diagnostic>) {
    let text = expanded.text.as_str();
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut diags = Vec::new();
    let mut i = 0;
    // Paren depth inside an unstructured annotation body `@name( ... )`,
    // whose tokens may be any characters (P4_16 Appendix H: an
    // annotationToken may be UNEXPECTED_TOKEN; p4c's free-form-annotation).
    let mut annotation_depth: Option<usize> = None;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if b == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if b == b'/' && bytes.get(i + 1) == Some(&b'*') {
            match text[i + 2..].find("*/") {
                Some(p) => i += 2 + p + 2,
                None => {
                    diags.push(
                        Diagnostic::error(
                            codes::UNTERMINATED_COMMENT,
                            "unterminated block comment",
                        )
                        .with_primary(
                            expanded.span(i, i + 2),
                            "comment starts here and never ends",
                        ),
                    );
                    i = bytes.len();
                }
            }
            continue;
        }
        let start = i;
        let tok = if b.is_ascii_alphabetic() || b == b'_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            Tok::Ident(text[start..i].to_owned())
        } else if b.is_ascii_digit() {
            i = number_end(bytes, i);
            match decode_int(&text[start..i]) {
                Ok(lit) => Tok::Int(lit),
                Err(msg) => {
                    diags.push(
                        Diagnostic::error(
                            codes::BAD_INTEGER,
                            format!("invalid integer literal `{}`: {msg}", &text[start..i]),
                        )
                        .with_primary(expanded.span(start, i), "here"),
                    );
                    Tok::Int(IntLit {
                        value: 0,
                        wide: None,
                        negative: false,
                        width: None,
                        radix: 10,
                        raw: text[start..i].to_owned(),
                    })
                }
            }
        } else if b == b'"' {
            let (s, end, ok) = string_lit(text, i);
            if !ok {
                diags.push(
                    Diagnostic::error(codes::UNTERMINATED_STRING, "unterminated string literal")
                        .with_primary(expanded.span(start, start + 1), "string starts here"),
                );
            }
            i = end;
            Tok::Str(s)
        } else if let Some(p) = PUNCTS.iter().find(|p| text[i..].starts_with(**p)) {
            i += p.len();
            Tok::Punct(p)
        } else {
            let ch = text[i..].chars().next().unwrap_or('?');
            i += ch.len_utf8();
            if annotation_depth.is_some() {
                // Kept in the annotation's raw text (the parser slices it
                // from the source), never a token of its own.
                continue;
            }
            diags.push(
                Diagnostic::error(
                    codes::UNEXPECTED_CHAR,
                    format!("unexpected character `{}`", ch.escape_debug()),
                )
                .with_primary(expanded.span(start, i), "not valid in P4"),
            );
            continue;
        };
        annotation_depth = match (&tok, annotation_depth) {
            (Tok::Punct("("), Some(d)) => Some(d + 1),
            (Tok::Punct(")"), Some(1)) => None,
            (Tok::Punct(")"), Some(d)) => Some(d - 1),
            (Tok::Punct("("), None) if opens_annotation_body(&tokens) => Some(1),
            (_, d) => d,
        };
        tokens.push(Token {
            tok,
            lo: start,
            hi: i,
            span: expanded.span(start, i),
        });
    }
    let end = bytes.len();
    let eof_span = if end > 0 {
        let s = expanded.span(end - 1, end);
        Span::new(s.file, s.end, s.end)
    } else {
        Span::default()
    };
    tokens.push(Token {
        tok: Tok::Eof,
        lo: end,
        hi: end,
        span: eof_span,
    });
    (tokens, diags)
}

/// Whether a `(` after `tokens` opens an unstructured annotation body: the
/// last two tokens are `@` and, right after it, the annotation's name (the
/// parser takes the `(` that follows as the body, as here; `@pragma` runs to
/// the end of the line instead and takes no parenthesised body).
fn opens_annotation_body(tokens: &[Token]) -> bool {
    match tokens {
        [.., at, name] => {
            at.tok == Tok::Punct("@")
                && at.hi == name.lo
                && matches!(&name.tok, Tok::Ident(n) if n != "pragma")
        }
        _ => false,
    }
}

/// End of a number token: digits, letters, `_`, and a sign right after a
/// width prefix (`16s-3`, `8w-1`).
fn number_end(bytes: &[u8], mut i: usize) -> usize {
    let start = i;
    while i < bytes.len() {
        let b = bytes[i];
        let sign_after_width = b == b'-'
            && i > start
            && matches!(bytes[i - 1], b'w' | b's')
            && bytes[start..i - 1].iter().all(u8::is_ascii_digit)
            && bytes.get(i + 1).is_some_and(u8::is_ascii_digit);
        if b.is_ascii_alphanumeric() || b == b'_' || sign_after_width {
            i += 1;
        } else {
            break;
        }
    }
    i
}

/// Decodes an integer literal: `[width(w|s)][-][0x|0b|0o|0d]digits`, with
/// `_` separators (P4_16 §6.4.3.3).
pub fn decode_int(raw: &str) -> Result<IntLit, String> {
    let mut width = None;
    let mut body = raw;
    if let Some(p) = raw.find(['w', 's']) {
        let (w, rest) = raw.split_at(p);
        // `0x5s` is never a width prefix: only plain decimal digits before w/s.
        if !w.is_empty()
            && w.bytes().all(|b| b.is_ascii_digit())
            && !raw.starts_with("0x")
            && !raw.starts_with("0X")
        {
            let signed = rest.starts_with('s');
            let bits: u32 = w.parse().map_err(|_| format!("width `{w}` is too large"))?;
            if bits > MAX_LITERAL_WIDTH {
                return Err(format!(
                    "width {bits} exceeds the maximum of {MAX_LITERAL_WIDTH}"
                ));
            }
            if signed && bits < 2 {
                return Err("a signed literal needs a width of at least 2".into());
            }
            width = Some((bits, signed));
            body = &rest[1..];
        }
    }
    let negative = body.starts_with('-');
    if negative {
        body = &body[1..];
    }
    let (radix, digits) = match body.get(..2) {
        Some("0x" | "0X") => (16, &body[2..]),
        Some("0b" | "0B") => (2, &body[2..]),
        Some("0o" | "0O") => (8, &body[2..]),
        Some("0d" | "0D") => (10, &body[2..]),
        _ => (10, body),
    };
    let digits: String = digits.chars().filter(|c| *c != '_').collect();
    if digits.is_empty() {
        return Err("no digits".into());
    }
    // Little-endian u64 limbs: the magnitude may be as wide as the widest
    // type (a width-prefixed literal); multiply-add digit by digit.
    let max_limbs = match width {
        Some((bits, _)) if bits > 128 => bits.div_ceil(64) as usize,
        _ => 2,
    };
    let mut limbs: Vec<u64> = vec![0; max_limbs];
    for c in digits.chars() {
        let d = c
            .to_digit(radix)
            .ok_or_else(|| format!("`{c}` is not a base-{radix} digit"))?;
        let mut carry = d as u128;
        for l in limbs.iter_mut() {
            let t = *l as u128 * radix as u128 + carry;
            *l = t as u64;
            carry = t >> 64;
        }
        if carry != 0 {
            return Err(match width {
                Some((bits, _)) if bits > 128 => format!("value does not fit in {bits} bits"),
                _ => "value does not fit in 128 bits".into(),
            });
        }
    }
    let value = (limbs[1] as u128) << 64 | limbs[0] as u128;
    let wide = if limbs[2..].iter().any(|&l| l != 0) {
        if let Some((bits, signed)) = width {
            // Magnitude check above 128 bits: the highest set bit.
            let top = limbs.iter().rposition(|&l| l != 0).unwrap_or(0);
            let magnitude = 64 * top as u32 + (64 - limbs[top].leading_zeros());
            let exact_min = signed && negative && {
                // -2^(bits-1): a single bit at bits - 1.
                magnitude == bits && limbs.iter().map(|l| l.count_ones()).sum::<u32>() == 1
            };
            let magnitude_bits = if signed { bits - 1 } else { bits };
            if magnitude > magnitude_bits && !exact_min {
                return Err(format!("value does not fit in {bits} bits"));
            }
        }
        Some(limbs.into_boxed_slice())
    } else {
        None
    };
    if let (Some((bits, signed)), None) = (width, &wide) {
        let magnitude_bits = if signed { bits - 1 } else { bits };
        let limit_ok = magnitude_bits >= 128
            || value < (1u128 << magnitude_bits)
            || (signed && negative && value == 1u128 << magnitude_bits);
        if !limit_ok {
            return Err(format!("value {value} does not fit in {bits} bits"));
        }
    }
    Ok(IntLit {
        value,
        wide,
        negative,
        width,
        radix,
        raw: raw.to_owned(),
    })
}

/// Decodes a string literal starting at `i` (the `"`). Returns the value,
/// the end offset and whether it was terminated. A string runs to the first
/// `"` not escaped by a backslash, over newlines too (P4_16 §6.4.3.3; p4c
/// takes such strings, as in PINS's `@entry_restriction` bodies).
fn string_lit(text: &str, i: usize) -> (String, usize, bool) {
    let mut out = String::new();
    let mut chars = text[i + 1..].char_indices();
    while let Some((k, c)) = chars.next() {
        match c {
            '"' => return (out, i + 1 + k + 1, true),
            '\\' => match chars.next() {
                Some((_, 'n')) => out.push('\n'),
                Some((_, 't')) => out.push('\t'),
                Some((_, 'r')) => out.push('\r'),
                Some((_, '0')) => out.push('\0'),
                Some((_, e)) => out.push(e),
                None => return (out, text.len(), false),
            },
            c => out.push(c),
        }
    }
    (out, text.len(), false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::SourceMap;
    use crate::front::preprocess::{MemLoader, preprocess};

    fn toks(src: &str) -> (Vec<Tok>, Vec<Diagnostic>) {
        let mut map = SourceMap::new();
        let f = map.add("t.p4", src);
        let e = preprocess(&mut map, f, &mut MemLoader::default()).expect("pp");
        let (t, d) = lex(&e);
        (t.into_iter().map(|t| t.tok).collect(), d)
    }

    fn int(raw: &str) -> IntLit {
        decode_int(raw).expect("valid literal")
    }

    #[test]
    fn wide_literals_keep_every_limb() {
        let l = int(
            "336w0x8000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000",
        );
        let limbs = l.wide.expect("needs more than 128 bits");
        assert_eq!(limbs.len(), 6);
        assert_eq!(limbs[5], 0x8000, "bit 335 is bit 15 of limb 5");
        assert_eq!(&limbs[..5], &[0; 5]);
        // 2^200 in decimal.
        let l = int("256w1606938044258990275541962092341162602522202993782792835301376");
        assert_eq!(l.wide.as_deref(), Some(&[0, 0, 0, 1 << 8][..]));
        assert!(
            decode_int("200w0x1_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000")
                .is_err()
        );
        assert!(decode_int("0x1_0000_0000_0000_0000_0000_0000_0000_0000").is_err());
        // -2^255 fits int<256>; 2^255 does not.
        let p255 =
            "0x8000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000";
        assert!(decode_int(&format!("256s-{p255}")).is_ok());
        assert!(decode_int(&format!("256s{p255}")).is_err());
    }

    #[test]
    fn integer_literals_decode_width_sign_and_radix() {
        assert_eq!(int("8w5").width, Some((8, false)));
        assert_eq!(int("8w5").value, 5);
        let l = int("16s-3");
        assert_eq!((l.value, l.negative, l.width), (3, true, Some((16, true))));
        assert_eq!(int("0xFF_FF").value, 0xffff);
        assert_eq!(int("0b1010").value, 10);
        assert_eq!(int("0o17").value, 15);
        assert_eq!(int("32w0x0A000001").value, 0x0A00_0001);
        assert_eq!(int("1_000").value, 1000);
        assert_eq!(int("8s-128").value, 128);
        assert!(decode_int("0w1").is_err());
        assert!(decode_int("8w256").is_err());
        assert!(decode_int("8s128").is_err());
        assert!(decode_int("12ab").is_err());
        assert!(decode_int("0x").is_err());
        assert!(decode_int("999999999999999999999999999999999999999999").is_err());
    }

    #[test]
    fn operators_are_greedy_but_shift_right_is_two_tokens() {
        let (t, d) = toks("a &&& b |+| c |-| d ++ e .. f >> g >= h");
        assert!(d.is_empty());
        let puncts: Vec<&str> = t
            .iter()
            .filter_map(|t| match t {
                Tok::Punct(p) => Some(*p),
                _ => None,
            })
            .collect();
        assert_eq!(puncts, ["&&&", "|+|", "|-|", "++", "..", ">", ">", ">="]);
    }

    #[test]
    fn compound_assignments_are_tokens() {
        let (t, d) = toks("a += b |+|= c <<= d >>= e &= f");
        assert!(d.is_empty());
        let puncts: Vec<&str> = t
            .iter()
            .filter_map(|t| match t {
                Tok::Punct(p) => Some(*p),
                _ => None,
            })
            .collect();
        assert_eq!(puncts, ["+=", "|+|=", "<<=", ">", ">=", "&="]);
    }

    #[test]
    fn comments_and_strings() {
        let (t, d) = toks("/* x */ a // y\n\"q\\\"z\"");
        assert!(d.is_empty());
        assert_eq!(
            t,
            [Tok::Ident("a".into()), Tok::Str("q\"z".into()), Tok::Eof]
        );
        let (_, d) = toks("\"open\n");
        assert_eq!(d[0].code, codes::UNTERMINATED_STRING);
        // A string runs over newlines to its closing quote (P4_16 §6.4.3.3).
        let (t, d) = toks("\"two\n// lines\" b");
        assert!(d.is_empty());
        assert_eq!(
            t,
            [
                Tok::Str("two\n// lines".into()),
                Tok::Ident("b".into()),
                Tok::Eof
            ]
        );
        let (_, d) = toks("a $ b");
        assert_eq!(d[0].code, codes::UNEXPECTED_CHAR);
    }

    #[test]
    fn any_character_in_an_unstructured_annotation_body() {
        // P4_16 Appendix H: an annotation body token may be an
        // UNEXPECTED_TOKEN; nested parentheses keep the body open.
        let (t, d) = toks("@doc(That's (it') $) x");
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(t[t.len() - 2], Tok::Ident("x".into()));
        // Outside the body, and in a structured `[...]` one, still refused.
        let (_, d) = toks("@doc(ok) x'");
        assert_eq!(d[0].code, codes::UNEXPECTED_CHAR);
        let (_, d) = toks("@doc[k = 1'] x");
        assert_eq!(d[0].code, codes::UNEXPECTED_CHAR);
        let (_, d) = toks("@ doc(it's)");
        assert_eq!(d[0].code, codes::UNEXPECTED_CHAR);
    }
}
