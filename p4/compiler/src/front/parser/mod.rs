//! Recursive-descent parser: tokens to [`Program`] (P4_16 Appendix H
//! grammar, as v1model programs use it).
//!
//! Contract:
//! - Never panics, whatever the tokens. Nesting is bounded by [`MAX_DEPTH`];
//!   deeper input yields one [`codes::TOO_DEEP`] error and parsing stops.
//! - Errors are collected, not fatal: after an error the parser skips to the
//!   next `;` or closing `}` at the same nesting and carries on, so one typo
//!   does not hide the next. At most [`MAX_ERRORS`] are reported.
//! - Like p4c, it tracks which identifiers name types (declared so far,
//!   plus the type parameters in scope), because P4's grammar needs that to
//!   tell `T x;` from `a b;`, `(T) e` from `(e)` and `f<T>(x)` from `a < b`.
//! - Keywords that the grammar also allows as names (`apply`, `key`,
//!   `actions`, `entries`, `state`, `type`, `priority`...) are accepted as
//!   names where P4 allows a name; member names after `.` may be any word.
//!
//! This file holds the [`Parser`] state, token access, error recovery and
//! names; each part of the grammar has a file of its own (`decls`, `types`,
//! `annotations`, `parsers`, `controls`, `tables`, `stmts`, `exprs`), all
//! methods of the one [`Parser`].

use std::collections::HashSet;

use crate::diag::{Diagnostic, Span, codes};
use crate::front::ast::*;
use crate::front::lexer::{Tok, Token};

mod annotations;
mod controls;
mod decls;
mod exprs;
mod parsers;
mod stmts;
mod tables;
mod types;

/// How deep expressions, statements and types may nest.
pub const MAX_DEPTH: usize = 256;
/// Nesting limit when parsing on the caller's stack (see [`parse_tokens`]).
pub const FALLBACK_MAX_DEPTH: usize = 64;
/// Stack of the parser thread. Debug builds use up to ~20 KiB per nesting
/// level; this leaves room for [`MAX_DEPTH`] several times over.
pub const PARSER_STACK_BYTES: usize = 64 << 20;
/// Parsing stops after this many errors.
pub const MAX_ERRORS: usize = 50;

/// Words that can never name a declaration.
const RESERVED: &[&str] = &[
    "abstract",
    "action",
    "bit",
    "bool",
    "const",
    "control",
    "default",
    "else",
    "enum",
    "error",
    "exit",
    "extern",
    "false",
    "header",
    "header_union",
    "if",
    "in",
    "inout",
    "int",
    "match_kind",
    "out",
    "package",
    "parser",
    "return",
    "select",
    "string",
    "struct",
    "switch",
    "table",
    "this",
    "transition",
    "true",
    "tuple",
    "typedef",
    "varbit",
    "void",
    "value_set",
];

/// Type keywords that start a variable declaration in a block.
const BUILTIN_TYPES: &[&str] = &[
    "bit",
    "int",
    "varbit",
    "bool",
    "string",
    "tuple",
    "match_kind",
    "void",
];

/// `Err(())` means "a diagnostic was recorded".
type PResult<T> = Result<T, ()>;

/// Parses a whole token stream (ending in `Eof`). `text` is the expanded
/// text the tokens index into (for annotation bodies). Returns the program
/// and the diagnostics; the program is partial when there were errors.
///
/// The parser recurses once per nesting level, so it runs on its own thread
/// with a [`PARSER_STACK_BYTES`] stack; the caller's stack size (2 MiB for
/// test threads) does not matter. Should the thread not start, it parses on
/// the caller's thread with the nesting limit cut to [`FALLBACK_MAX_DEPTH`].
pub fn parse_tokens(tokens: &[Token], text: &str) -> (Program, Vec<Diagnostic>) {
    let run = |max_depth: usize| {
        let mut p = Parser::new(tokens, text);
        p.max_depth = max_depth;
        let program = p.program();
        (program, p.diags)
    };
    std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("p4-parser".into())
            .stack_size(PARSER_STACK_BYTES)
            .spawn_scoped(scope, || run(MAX_DEPTH));
        match spawned.map(|h| h.join()) {
            Ok(Ok(result)) => result,
            // The parser does not panic; a failed join can only mean the
            // thread could not run, so parse here with a safe depth.
            _ => run(FALLBACK_MAX_DEPTH),
        }
    })
}

/// Where a consumed token was (see [`Token`]).
#[derive(Clone, Copy, Debug)]
struct Consumed {
    span: Span,
    lo: usize,
    hi: usize,
}

struct Parser<'t> {
    toks: &'t [Token],
    text: &'t str,
    pos: usize,
    prev_span: Span,
    diags: Vec<Diagnostic>,
    depth: usize,
    max_depth: usize,
    types: HashSet<String>,
    /// Innermost last: names declared in each scope, `true` for a type
    /// (a type parameter), `false` for a value that shadows a type name.
    type_scopes: Vec<Vec<(String, bool)>>,
    /// Declarations a top-level declaration brought with it: the header,
    /// struct or enum that `typedef header H { ... } T;` declares inline.
    pending: Vec<Decl>,
    eof: Token,
}

fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Ident(s) => format!("`{s}`"),
        Tok::Int(i) => format!("`{}`", i.raw),
        Tok::Str(_) => "a string literal".to_owned(),
        Tok::Punct(p) => format!("`{p}`"),
        Tok::Eof => "end of file".to_owned(),
    }
}

impl<'t> Parser<'t> {
    fn new(toks: &'t [Token], text: &'t str) -> Self {
        let eof = toks.last().cloned().unwrap_or(Token {
            tok: Tok::Eof,
            lo: text.len(),
            hi: text.len(),
            span: Span::default(),
        });
        Parser {
            toks,
            text,
            pos: 0,
            prev_span: eof.span,
            diags: Vec::new(),
            depth: 0,
            max_depth: MAX_DEPTH,
            types: HashSet::new(),
            type_scopes: Vec::new(),
            pending: Vec::new(),
            eof,
        }
    }

    // ---- token access ----------------------------------------------------

    fn peek(&self) -> &Token {
        self.toks.get(self.pos).unwrap_or(&self.eof)
    }

    fn peek_at(&self, n: usize) -> &Token {
        self.toks.get(self.pos + n).unwrap_or(&self.eof)
    }

    fn at_eof(&self) -> bool {
        matches!(self.peek().tok, Tok::Eof)
    }

    /// Consumes the current token (never moves past end of file) and
    /// returns where it was.
    fn bump(&mut self) -> Consumed {
        let t = self.peek();
        let c = Consumed {
            span: t.span,
            lo: t.lo,
            hi: t.hi,
        };
        if self.pos < self.toks.len() && !matches!(t.tok, Tok::Eof) {
            self.pos += 1;
        }
        self.prev_span = c.span;
        c
    }

    fn is_punct_at(&self, n: usize, p: &str) -> bool {
        matches!(&self.peek_at(n).tok, Tok::Punct(q) if *q == p)
    }

    fn at(&self, p: &str) -> bool {
        self.is_punct_at(0, p)
    }

    fn is_word_at(&self, n: usize, w: &str) -> bool {
        matches!(&self.peek_at(n).tok, Tok::Ident(s) if s == w)
    }

    fn at_word(&self, w: &str) -> bool {
        self.is_word_at(0, w)
    }

    fn eat(&mut self, p: &str) -> bool {
        if self.at(p) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn eat_word(&mut self, w: &str) -> bool {
        if self.at_word(w) {
            self.bump();
            true
        } else {
            false
        }
    }

    // ---- diagnostics -----------------------------------------------------

    fn push(&mut self, d: Diagnostic) {
        if self.diags.len() < MAX_ERRORS {
            self.diags.push(d);
        }
        if self.diags.len() >= MAX_ERRORS {
            self.halt();
        }
    }

    /// Stops parsing: every later `peek` sees end of file.
    fn halt(&mut self) {
        self.pos = self.toks.len();
    }

    fn expected(&mut self, what: &str) {
        let t = self.peek().clone();
        let found = describe(&t.tok);
        self.push(
            Diagnostic::error(
                codes::UNEXPECTED_TOKEN,
                format!("expected {what}, found {found}"),
            )
            .with_primary(t.span, format!("expected {what}")),
        );
    }

    fn expect(&mut self, p: &str) -> PResult<Span> {
        if self.at(p) {
            Ok(self.bump().span)
        } else {
            self.expected(&format!("`{p}`"));
            Err(())
        }
    }

    /// Expects `;` ending `what`; the error points just after the previous
    /// token, where the `;` belongs.
    fn expect_semi(&mut self, what: &str) -> PResult<()> {
        if self.eat(";") {
            return Ok(());
        }
        let t = self.peek().clone();
        let prev = self.prev_span;
        self.push(
            Diagnostic::error(
                codes::UNEXPECTED_TOKEN,
                format!("expected `;` after {what}, found {}", describe(&t.tok)),
            )
            .with_primary(prev, "expected `;` after this")
            .with_secondary(t.span, "unexpected token"),
        );
        Err(())
    }

    /// Expects the `close` of an `open` at `open_span`; at end of file the
    /// error points at the unclosed opener.
    fn expect_close(&mut self, close: &str, open: &str, open_span: Span) -> PResult<Span> {
        if self.at(close) {
            return Ok(self.bump().span);
        }
        if self.at_eof() {
            self.push(
                Diagnostic::error(codes::UNCLOSED_DELIMITER, format!("unclosed `{open}`"))
                    .with_primary(open_span, format!("this `{open}` is never closed")),
            );
        } else {
            self.expected(&format!("`{close}`"));
        }
        Err(())
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > self.max_depth {
            let span = self.peek().span;
            self.depth -= 1;
            self.push(
                Diagnostic::error(
                    codes::TOO_DEEP,
                    format!("nesting deeper than {} levels", self.max_depth),
                )
                .with_primary(span, "too deep here"),
            );
            self.halt();
            return Err(());
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// `{ element* }`, the shape of every braced list in the grammar:
    /// parses elements up to the closing brace, skipping to the next one
    /// after an error (so one bad element does not hide the next) and
    /// always moving on. Returns the elements and the span of the `{`.
    fn braced<T>(
        &mut self,
        mut element: impl FnMut(&mut Self) -> PResult<T>,
    ) -> PResult<(Vec<T>, Span)> {
        let open = self.expect("{")?;
        let mut items = Vec::new();
        while !self.at("}") && !self.at_eof() {
            let before = self.pos;
            match element(self) {
                Ok(item) => items.push(item),
                Err(()) => self.recover(),
            }
            if self.pos == before {
                self.bump();
            }
        }
        self.expect_close("}", "{", open)?;
        Ok((items, open))
    }

    /// Skips to just after the next `;` or to the next unmatched closing
    /// bracket at this nesting level.
    fn recover(&mut self) {
        let mut depth = 0usize;
        loop {
            match &self.peek().tok {
                Tok::Eof => return,
                Tok::Punct("{" | "(" | "[") => depth += 1,
                Tok::Punct("}") if depth <= 1 => {
                    if depth == 1 {
                        // The end of a body we started skipping: done.
                        self.bump();
                    }
                    return;
                }
                Tok::Punct(")" | "]" | "}") => {
                    if depth == 0 {
                        return;
                    }
                    depth -= 1;
                }
                Tok::Punct(";") if depth == 0 => {
                    self.bump();
                    return;
                }
                _ => {}
            }
            self.bump();
        }
    }

    // ---- names and types -------------------------------------------------

    fn is_type_name(&self, name: &str) -> bool {
        for scope in self.type_scopes.iter().rev() {
            if let Some((_, is_type)) = scope.iter().rev().find(|(n, _)| n == name) {
                return *is_type;
            }
        }
        self.types.contains(name)
    }

    /// Records a value (parameter, variable, instance) in the innermost
    /// scope, so it shadows a type of the same name there.
    fn declare_value(&mut self, name: &Ident) {
        if let Some(scope) = self.type_scopes.last_mut() {
            scope.push((name.name.clone(), false));
        }
    }

    fn ident_any(&mut self, what: &str) -> PResult<Ident> {
        match &self.peek().tok {
            Tok::Ident(s) => {
                let ident = Ident {
                    name: s.clone(),
                    span: self.peek().span,
                };
                self.bump();
                Ok(ident)
            }
            _ => {
                self.expected(what);
                Err(())
            }
        }
    }

    /// A name that may be declared (not a reserved word).
    fn name(&mut self, what: &str) -> PResult<Ident> {
        if let Tok::Ident(s) = &self.peek().tok
            && RESERVED.contains(&s.as_str())
        {
            let found = s.clone();
            let span = self.peek().span;
            self.push(
                Diagnostic::error(
                    codes::UNEXPECTED_TOKEN,
                    format!("expected {what}, found keyword `{found}`"),
                )
                .with_primary(span, "a keyword cannot be used as a name"),
            );
            return Err(());
        }
        // `_` is p4c's don't-care token, never an identifier: a
        // declaration named `_` is a syntax error there (underscore_e and
        // its siblings).
        if let Tok::Ident(s) = &self.peek().tok
            && s == "_"
        {
            let span = self.peek().span;
            self.push(
                Diagnostic::error(
                    codes::UNEXPECTED_TOKEN,
                    format!("expected {what}, found `_`"),
                )
                .with_primary(span, "`_` is the don't-care, not a name"),
            );
            return Err(());
        }
        self.ident_any(what)
    }

    fn path_name(&mut self, what: &str) -> PResult<PathName> {
        let start = self.peek().span;
        let top_level = self.eat(".");
        let ident = self.name(what)?;
        Ok(PathName {
            top_level,
            span: start.to(ident.span),
            ident,
        })
    }

    fn type_params(&mut self) -> PResult<Vec<Ident>> {
        let mut out = Vec::new();
        if !self.at("<") {
            return Ok(out);
        }
        let open = self.bump().span;
        loop {
            out.push(self.name("a type parameter name")?);
            if !self.eat(",") {
                break;
            }
        }
        self.expect_close(">", "<", open)?;
        Ok(out)
    }

    fn push_type_scope(&mut self, params: &[Ident]) {
        self.type_scopes
            .push(params.iter().map(|p| (p.name.clone(), true)).collect());
    }

    fn pop_type_scope(&mut self) {
        self.type_scopes.pop();
    }
}
