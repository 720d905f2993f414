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

use std::collections::HashSet;

use crate::diag::{Diagnostic, Span, codes};
use crate::front::ast::*;
use crate::front::lexer::{Tok, Token};

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

    fn ty(&mut self) -> PResult<Type> {
        self.enter()?;
        let r = self.ty_inner();
        self.leave();
        r
    }

    fn ty_inner(&mut self) -> PResult<Type> {
        let start = self.peek().span;
        let word = match &self.peek().tok {
            Tok::Ident(s) => s.clone(),
            Tok::Punct(".") => String::new(),
            _ => {
                self.expected("a type");
                return Err(());
            }
        };
        let kind = match word.as_str() {
            "bool" | "error" | "match_kind" | "string" | "void" => {
                self.bump();
                match word.as_str() {
                    "bool" => TypeKind::Bool,
                    "error" => TypeKind::Error,
                    "match_kind" => TypeKind::MatchKind,
                    "string" => TypeKind::String,
                    _ => TypeKind::Void,
                }
            }
            "bit" | "int" | "varbit" => {
                self.bump();
                if self.at("<") {
                    let w = self.width()?;
                    match word.as_str() {
                        "bit" => TypeKind::Bit(Box::new(w)),
                        "int" => TypeKind::SignedInt(Box::new(w)),
                        _ => TypeKind::Varbit(Box::new(w)),
                    }
                } else {
                    match word.as_str() {
                        "bit" => TypeKind::Bit(Box::new(Expr {
                            kind: ExprKind::Int(IntLit {
                                value: 1,
                                wide: None,
                                negative: false,
                                width: None,
                                radix: 10,
                                raw: "1".into(),
                            }),
                            span: start,
                        })),
                        "int" => TypeKind::Int,
                        _ => {
                            self.expected("`<` after `varbit`");
                            return Err(());
                        }
                    }
                }
            }
            // `list` is a type keyword since P4_16 v1.2.4; older programs
            // may still name something `list`, so only `list<` not naming
            // a declared type starts a list type.
            "list" if self.is_punct_at(1, "<") && !self.is_type_name("list") => {
                self.bump();
                let open = self.expect("<")?;
                let elem = self.ty()?;
                self.expect_close(">", "<", open)?;
                TypeKind::List(Box::new(elem))
            }
            "tuple" => {
                self.bump();
                let open = self.expect("<")?;
                let mut elems = Vec::new();
                if !self.at(">") {
                    loop {
                        elems.push(self.ty()?);
                        if !self.eat(",") {
                            break;
                        }
                    }
                }
                self.expect_close(">", "<", open)?;
                TypeKind::Tuple(elems)
            }
            "_" => {
                self.bump();
                TypeKind::DontCare
            }
            _ => {
                let name = self.path_name("a type name")?;
                let mut args = Vec::new();
                if self.at("<") {
                    let open = self.bump().span;
                    loop {
                        args.push(self.ty()?);
                        if !self.eat(",") {
                            break;
                        }
                    }
                    self.expect_close(">", "<", open)?;
                }
                TypeKind::Named { name, args }
            }
        };
        let mut t = Type {
            kind,
            span: start.to(self.prev_span),
        };
        while self.at("[") {
            let open = self.bump().span;
            let size = self.expr()?;
            self.expect_close("]", "[", open)?;
            t = Type {
                span: start.to(self.prev_span),
                kind: TypeKind::Stack {
                    elem: Box::new(t),
                    size: Box::new(size),
                },
            };
        }
        Ok(t)
    }

    /// `<8>`, `<(W + 1)>` or `<W>` after `bit`/`int`/`varbit`.
    fn width(&mut self) -> PResult<Expr> {
        let open = self.expect("<")?;
        let w = match &self.peek().tok {
            Tok::Int(i) => {
                let e = Expr {
                    kind: ExprKind::Int(i.clone()),
                    span: self.peek().span,
                };
                self.bump();
                e
            }
            Tok::Punct("(") => {
                let o = self.bump().span;
                let e = self.expr()?;
                self.expect_close(")", "(", o)?;
                e
            }
            Tok::Ident(_) | Tok::Punct(".") => {
                let n = self.path_name("a width")?;
                Expr {
                    span: n.span,
                    kind: ExprKind::Name(n),
                }
            }
            _ => {
                self.expected("a width (an integer, a constant or a parenthesised expression)");
                return Err(());
            }
        };
        self.expect_close(">", "<", open)?;
        Ok(w)
    }

    /// Whether the tokens at `n` start a type in a statement/local position
    /// (so `T x;` is a declaration, not an expression).
    fn starts_declaration(&self) -> bool {
        let Tok::Ident(w) = &self.peek().tok else {
            return false;
        };
        let next = &self.peek_at(1).tok;
        if w == "error" {
            return matches!(next, Tok::Ident(_));
        }
        if BUILTIN_TYPES.contains(&w.as_str()) {
            return true;
        }
        // `list<T> x`: no statement starts with `name <` otherwise.
        if w == "list" && matches!(next, Tok::Punct("<")) {
            return true;
        }
        self.is_type_name(w) && matches!(next, Tok::Ident(_) | Tok::Punct("<" | "[" | "("))
    }

    // ---- annotations -----------------------------------------------------

    fn annotations(&mut self) -> PResult<Vec<Annotation>> {
        let mut out = Vec::new();
        while self.at("@") {
            out.push(self.annotation()?);
        }
        Ok(out)
    }

    fn annotation(&mut self) -> PResult<Annotation> {
        let at = self.bump();
        let name = match &self.peek().tok {
            Tok::Ident(s) if self.peek().lo == at.hi => Ident {
                name: s.clone(),
                span: self.peek().span,
            },
            _ => {
                let t = self.peek().clone();
                self.push(
                    Diagnostic::error(
                        codes::BAD_ANNOTATION,
                        format!(
                            "expected an annotation name after `@`, found {}",
                            describe(&t.tok)
                        ),
                    )
                    .with_primary(at.span.to(t.span), "annotation name missing"),
                );
                return Err(());
            }
        };
        self.bump();
        let body = if name.name == "pragma" {
            // `@pragma name tokens...` runs to the end of the line.
            let start = self.peek().lo;
            let mut end = start;
            while !self.at_eof()
                && !self
                    .text
                    .get(at.hi..self.peek().lo)
                    .unwrap_or("")
                    .contains('\n')
            {
                end = self.bump().hi;
            }
            AnnotationBody::Unstructured {
                raw: self.text.get(start..end).unwrap_or("").to_owned(),
                exprs: None,
            }
        } else if self.at("(") || self.at("[") {
            let structured = self.at("[");
            let (open_s, close_s) = if structured { ("[", "]") } else { ("(", ")") };
            let open = self.bump();
            let body_start = self.pos;
            let mut depth = 0usize;
            loop {
                match &self.peek().tok {
                    Tok::Eof => {
                        self.push(
                            Diagnostic::error(
                                codes::BAD_ANNOTATION,
                                format!("unclosed `{open_s}` in annotation `@{}`", name.name),
                            )
                            .with_primary(open.span, format!("this `{open_s}` is never closed")),
                        );
                        return Err(());
                    }
                    Tok::Punct("(" | "[" | "{") => depth += 1,
                    Tok::Punct(p @ (")" | "]" | "}")) => {
                        if depth == 0 {
                            if *p == close_s {
                                break;
                            }
                            let t = self.peek().clone();
                            self.push(
                                Diagnostic::error(
                                    codes::BAD_ANNOTATION,
                                    format!("mismatched `{p}` in annotation `@{}`", name.name),
                                )
                                .with_primary(t.span, format!("expected `{close_s}`"))
                                .with_secondary(open.span, "annotation body opened here"),
                            );
                            return Err(());
                        }
                        depth -= 1;
                    }
                    _ => {}
                }
                self.bump();
            }
            let body_end = self.pos;
            let close = self.bump();
            let raw = self
                .text
                .get(open.hi..close.lo)
                .unwrap_or("")
                .trim()
                .to_owned();
            let mut sub_toks: Vec<Token> = self.toks[body_start..body_end].to_vec();
            sub_toks.push(Token {
                tok: Tok::Eof,
                lo: close.lo,
                hi: close.lo,
                span: close.span,
            });
            let mut sub = Parser::new(&sub_toks, self.text);
            sub.types = self.types.clone();
            sub.depth = self.depth;
            sub.max_depth = self.max_depth;
            if structured {
                let (exprs, kvs) = sub.structured_body();
                if !sub.diags.is_empty() {
                    let d = sub.diags.swap_remove(0);
                    self.push(d);
                    return Err(());
                }
                AnnotationBody::Structured { raw, exprs, kvs }
            } else {
                let exprs = sub.expr_list_to_end();
                AnnotationBody::Unstructured {
                    raw,
                    exprs: sub.diags.is_empty().then_some(exprs).flatten(),
                }
            }
        } else {
            AnnotationBody::Empty
        };
        let span = at.span.to(self.prev_span);
        if matches!(name.name.as_str(), "name" | "deprecated") && !string_annotation_ok(&body) {
            // P4_16 §18.3.3: `@name` gives a control-plane name and
            // `@deprecated` a message, each one string (literals joined by
            // `++`); p4c's spec-issue1297-string-cat-err-2-anno (`@name(4)`)
            // and -3-anno (`@deprecated("a" | "b")`).
            self.push(
                Diagnostic::error(
                    codes::BAD_ANNOTATION,
                    format!("`@{}` takes one string", name.name),
                )
                .with_primary(span, "not a string"),
            );
        }
        Ok(Annotation { name, body, span })
    }

    /// Parses the whole (sub-parser) input as `e, e, ...`.
    fn expr_list_to_end(&mut self) -> Option<Vec<Expr>> {
        let mut out = Vec::new();
        while !self.at_eof() {
            out.push(self.expr().ok()?);
            if !self.eat(",") {
                break;
            }
        }
        self.at_eof().then_some(out)
    }

    fn structured_body(&mut self) -> (Vec<Expr>, Vec<NamedExpr>) {
        let mut exprs = Vec::new();
        let mut kvs = Vec::new();
        while !self.at_eof() {
            if matches!(self.peek().tok, Tok::Ident(_)) && self.is_punct_at(1, "=") {
                let Ok(name) = self.ident_any("a name") else {
                    break;
                };
                self.bump();
                let Ok(value) = self.expr() else { break };
                kvs.push(NamedExpr {
                    span: name.span.to(value.span),
                    name,
                    value,
                });
            } else {
                let Ok(e) = self.expr() else { break };
                exprs.push(e);
            }
            if !self.eat(",") {
                break;
            }
        }
        if !self.at_eof() && self.diags.is_empty() {
            self.expected("`,` or `]`");
        }
        if !exprs.is_empty() && !kvs.is_empty() && self.diags.is_empty() {
            let span = self.peek().span;
            self.push(
                Diagnostic::error(
                    codes::BAD_ANNOTATION,
                    "a structured annotation is either a list of expressions or of `key = value` pairs, not both",
                )
                .with_primary(span, ""),
            );
        }
        (exprs, kvs)
    }

    // ---- program and declarations ----------------------------------------

    fn program(&mut self) -> Program {
        let mut decls = Vec::new();
        while !self.at_eof() {
            let before = self.pos;
            match self.top_decl() {
                Ok(Some(d)) => {
                    // An inline derived type goes before the typedef naming it.
                    decls.append(&mut self.pending);
                    decls.push(d);
                }
                Ok(None) => {}
                Err(()) => {
                    self.pending.clear();
                    self.recover();
                }
            }
            if self.pos == before && !self.at_eof() {
                self.bump();
            }
        }
        Program { decls }
    }

    /// One top-level declaration; `Ok(None)` for a stray `;`.
    fn top_decl(&mut self) -> PResult<Option<Decl>> {
        if self.eat(";") {
            return Ok(None);
        }
        let start = self.peek().span;
        let annotations = self.annotations()?;
        let Tok::Ident(w) = &self.peek().tok else {
            if self.at("}") {
                let span = self.peek().span;
                self.push(
                    Diagnostic::error(codes::UNEXPECTED_TOKEN, "unexpected `}` at top level")
                        .with_primary(span, "this `}` closes nothing"),
                );
                self.bump();
                return Err(());
            }
            self.expected("a declaration");
            return Err(());
        };
        let decl = match w.as_str() {
            "const" => Decl::Const(self.const_decl(annotations, start)?),
            "typedef" | "type" if !self.is_punct_at(1, "(") => self.typedef(annotations, start)?,
            "header" | "header_union" | "struct" => self.struct_like(annotations, start)?,
            "enum" => self.enum_decl(annotations, start)?,
            "error" | "match_kind" if self.is_punct_at(1, "{") => {
                self.name_list(annotations, start)?
            }
            "extern" => self.extern_decl(annotations, start)?,
            "parser" => self.parser_decl(annotations, start)?,
            "control" => self.control_decl(annotations, start)?,
            "package" => {
                self.bump();
                let sig = self.signature(annotations, start)?;
                self.types.insert(sig.name.name.clone());
                self.pop_type_scope();
                self.expect_semi("the package declaration")?;
                Decl::Package(TypeDeclSignature {
                    span: start.to(self.prev_span),
                    ..sig
                })
            }
            "action" => Decl::Action(self.action_decl(annotations, start)?),
            _ => self.type_led_decl(annotations, start)?,
        };
        Ok(Some(decl))
    }

    fn const_decl(&mut self, annotations: Vec<Annotation>, start: Span) -> PResult<ConstDecl> {
        self.bump(); // const
        let ty = self.ty()?;
        let name = self.name("a constant name")?;
        self.expect("=")?;
        let value = self.expr()?;
        self.expect_semi("the constant declaration")?;
        Ok(ConstDecl {
            annotations,
            ty,
            name,
            value,
            span: start.to(self.prev_span),
        })
    }

    fn typedef(&mut self, annotations: Vec<Annotation>, start: Span) -> PResult<Decl> {
        let is_new_type = self.at_word("type");
        self.bump();
        // P4_16's grammar also takes a derived type declaration here
        // (`typedef header h_t { bit<8> f; } H_t;`): it declares `h_t` as if
        // written on its own, and the typedef names it.
        let ty = if ["header", "header_union", "struct", "enum"]
            .iter()
            .any(|w| self.at_word(w))
        {
            let dstart = self.peek().span;
            let derived = if self.at_word("enum") {
                self.enum_decl(Vec::new(), dstart)?
            } else {
                self.struct_like(Vec::new(), dstart)?
            };
            let Some(dname) = derived.name().cloned() else {
                return Err(());
            };
            self.pending.push(derived);
            Type {
                span: dname.span,
                kind: TypeKind::Named {
                    name: PathName {
                        top_level: false,
                        span: dname.span,
                        ident: dname,
                    },
                    args: Vec::new(),
                },
            }
        } else {
            self.ty()?
        };
        let name = self.name("the new type's name")?;
        self.types.insert(name.name.clone());
        self.expect_semi("the type definition")?;
        Ok(Decl::Typedef(TypedefDecl {
            annotations,
            is_new_type,
            ty,
            name,
            span: start.to(self.prev_span),
        }))
    }

    fn struct_like(&mut self, annotations: Vec<Annotation>, start: Span) -> PResult<Decl> {
        let kind = if self.at_word("header") {
            Decl::Header
        } else if self.at_word("header_union") {
            Decl::HeaderUnion
        } else {
            Decl::Struct
        };
        self.bump();
        let name = self.name("a type name")?;
        self.types.insert(name.name.clone());
        let type_params = self.type_params()?;
        self.push_type_scope(&type_params);
        let fields = self.fields();
        self.pop_type_scope();
        let fields = fields?;
        let d = StructLikeDecl {
            annotations,
            name,
            type_params,
            fields,
            span: start.to(self.prev_span),
        };
        Ok(kind(d))
    }

    fn fields(&mut self) -> PResult<Vec<Field>> {
        let open = self.expect("{")?;
        let mut fields = Vec::new();
        while !self.at("}") && !self.at_eof() {
            let before = self.pos;
            match self.field() {
                Ok(f) => fields.push(f),
                Err(()) => self.recover(),
            }
            if self.pos == before {
                self.bump();
            }
        }
        self.expect_close("}", "{", open)?;
        Ok(fields)
    }

    fn field(&mut self) -> PResult<Field> {
        let start = self.peek().span;
        let annotations = self.annotations()?;
        let mut ty = self.ty()?;
        let name = self.name("a field name")?;
        // The C-style array declarator p4c accepts, `bit<8> a[16];`, is
        // `bit<8>[16] a;`.
        while self.at("[") {
            let open = self.bump().span;
            let size = self.expr()?;
            self.expect_close("]", "[", open)?;
            ty = Type {
                span: ty.span.to(self.prev_span),
                kind: TypeKind::Stack {
                    elem: Box::new(ty),
                    size: Box::new(size),
                },
            };
        }
        self.expect_semi("the field")?;
        Ok(Field {
            annotations,
            ty,
            name,
            span: start.to(self.prev_span),
        })
    }

    fn enum_decl(&mut self, annotations: Vec<Annotation>, start: Span) -> PResult<Decl> {
        self.bump(); // enum
        let underlying = if matches!(self.peek_at(1).tok, Tok::Punct("{")) {
            None
        } else {
            Some(self.ty()?)
        };
        let name = self.name("an enum name")?;
        self.types.insert(name.name.clone());
        let open = self.expect("{")?;
        let mut members = Vec::new();
        while !self.at("}") && !self.at_eof() {
            let mstart = self.peek().span;
            let annotations = self.annotations()?;
            let name = self.name("an enum member")?;
            let value = if self.eat("=") {
                Some(self.expr()?)
            } else {
                None
            };
            members.push(EnumMember {
                annotations,
                name,
                value,
                span: mstart.to(self.prev_span),
            });
            if !self.eat(",") {
                break;
            }
        }
        self.expect_close("}", "{", open)?;
        Ok(Decl::Enum(EnumDecl {
            annotations,
            underlying,
            name,
            members,
            span: start.to(self.prev_span),
        }))
    }

    fn name_list(&mut self, annotations: Vec<Annotation>, start: Span) -> PResult<Decl> {
        let is_error = self.at_word("error");
        self.bump();
        let open = self.expect("{")?;
        let mut members = Vec::new();
        while !self.at("}") && !self.at_eof() {
            members.push(self.name("a name")?);
            if !self.eat(",") {
                break;
            }
        }
        self.expect_close("}", "{", open)?;
        let d = NameListDecl {
            annotations,
            members,
            span: start.to(self.prev_span),
        };
        Ok(if is_error {
            Decl::Error(d)
        } else {
            Decl::MatchKind(d)
        })
    }

    /// Whether `extern` at the cursor starts an extern object (as opposed
    /// to an extern function).
    fn extern_is_object(&self) -> bool {
        if !matches!(self.peek_at(1).tok, Tok::Ident(_)) {
            return false;
        }
        match &self.peek_at(2).tok {
            Tok::Punct("{") => true,
            Tok::Punct("<") => {
                let mut depth = 0usize;
                let mut n = 2;
                loop {
                    match &self.peek_at(n).tok {
                        Tok::Punct("<") => depth += 1,
                        Tok::Punct(">") => {
                            depth -= 1;
                            if depth == 0 {
                                return self.is_punct_at(n + 1, "{");
                            }
                        }
                        Tok::Eof | Tok::Punct(";" | "{" | "(") => return false,
                        _ => {}
                    }
                    n += 1;
                }
            }
            _ => false,
        }
    }

    fn extern_decl(&mut self, annotations: Vec<Annotation>, start: Span) -> PResult<Decl> {
        if !self.extern_is_object() {
            self.bump(); // extern
            let proto = self.prototype(annotations, false, start)?;
            return Ok(Decl::ExternFunction(proto));
        }
        self.bump(); // extern
        let name = self.name("an extern name")?;
        self.types.insert(name.name.clone());
        let type_params = self.type_params()?;
        self.push_type_scope(&type_params);
        let members = self.extern_members(&name);
        self.pop_type_scope();
        Ok(Decl::Extern(ExternDecl {
            annotations,
            name,
            type_params,
            members: members?,
            span: start.to(self.prev_span),
        }))
    }

    fn extern_members(&mut self, name: &Ident) -> PResult<Vec<ExternMember>> {
        let open = self.expect("{")?;
        let mut members = Vec::new();
        while !self.at("}") && !self.at_eof() {
            let before = self.pos;
            let r = (|| {
                let mstart = self.peek().span;
                let annotations = self.annotations()?;
                if self.at_word(&name.name) && self.is_punct_at(1, "(") {
                    let cname = self.ident_any("a constructor name")?;
                    let params = self.params()?;
                    self.expect_semi("the constructor declaration")?;
                    return Ok(ExternMember::Constructor {
                        annotations,
                        name: cname,
                        params,
                        span: mstart.to(self.prev_span),
                    });
                }
                let is_abstract = self.eat_word("abstract");
                Ok(ExternMember::Method(self.prototype(
                    annotations,
                    is_abstract,
                    mstart,
                )?))
            })();
            match r {
                Ok(m) => members.push(m),
                Err(()) => self.recover(),
            }
            if self.pos == before {
                self.bump();
            }
        }
        self.expect_close("}", "{", open)?;
        Ok(members)
    }

    /// `R name<T>(params);`
    fn prototype(
        &mut self,
        annotations: Vec<Annotation>,
        is_abstract: bool,
        start: Span,
    ) -> PResult<FunctionPrototype> {
        let return_type = self.ty()?;
        let name = self.name("a function name")?;
        let type_params = self.type_params()?;
        self.push_type_scope(&type_params);
        let params = self.params();
        self.pop_type_scope();
        let params = params?;
        self.expect_semi("the declaration")?;
        Ok(FunctionPrototype {
            annotations,
            is_abstract,
            return_type,
            name,
            type_params,
            params,
            span: start.to(self.prev_span),
        })
    }

    fn params(&mut self) -> PResult<Vec<Param>> {
        let open = self.expect("(")?;
        let mut out = Vec::new();
        if !self.at(")") {
            loop {
                let start = self.peek().span;
                let annotations = self.annotations()?;
                let direction = if self.eat_word("inout") {
                    Direction::InOut
                } else if self.eat_word("in") {
                    Direction::In
                } else if self.eat_word("out") {
                    Direction::Out
                } else {
                    Direction::None
                };
                let ty = self.ty()?;
                let name = self.name("a parameter name")?;
                self.declare_value(&name);
                let default = if self.eat("=") {
                    Some(self.expr()?)
                } else {
                    None
                };
                out.push(Param {
                    annotations,
                    direction,
                    ty,
                    name,
                    default,
                    span: start.to(self.prev_span),
                });
                if !self.eat(",") {
                    break;
                }
            }
        }
        self.expect_close(")", "(", open)?;
        Ok(out)
    }

    /// `kw Name<T>(params)`, with the keyword already consumed. Leaves the
    /// type parameters' scope pushed: the caller pops it.
    fn signature(
        &mut self,
        annotations: Vec<Annotation>,
        start: Span,
    ) -> PResult<TypeDeclSignature> {
        let name = self.name("a name")?;
        let type_params = self.type_params()?;
        self.push_type_scope(&type_params);
        let params = match self.params() {
            Ok(p) => p,
            Err(()) => {
                self.pop_type_scope();
                return Err(());
            }
        };
        Ok(TypeDeclSignature {
            annotations,
            name,
            type_params,
            params,
            span: start.to(self.prev_span),
        })
    }

    fn parser_decl(&mut self, annotations: Vec<Annotation>, start: Span) -> PResult<Decl> {
        self.bump(); // parser
        let sig = self.signature(annotations, start)?;
        self.types.insert(sig.name.name.clone());
        let r = self.parser_rest(sig, start);
        self.pop_type_scope();
        r
    }

    fn parser_rest(&mut self, sig: TypeDeclSignature, start: Span) -> PResult<Decl> {
        if self.eat(";") {
            return Ok(Decl::ParserType(TypeDeclSignature {
                span: start.to(self.prev_span),
                ..sig
            }));
        }
        let ctor_params = if self.at("(") {
            self.params()?
        } else {
            Vec::new()
        };
        let open = self.expect("{")?;
        let mut locals = Vec::new();
        let mut states = Vec::new();
        while !self.at("}") && !self.at_eof() {
            let before = self.pos;
            let r: PResult<()> = (|| {
                let lstart = self.peek().span;
                let annotations = self.annotations()?;
                if self.at_word("state") && matches!(self.peek_at(1).tok, Tok::Ident(_)) {
                    states.push(self.state(annotations, lstart)?);
                    return Ok(());
                }
                let d = self.local_decl(annotations, lstart, false)?;
                if !states.is_empty() {
                    // P4_16 grammar: parserLocalElements come before parserStates.
                    self.push(
                        Diagnostic::error(
                            codes::UNEXPECTED_TOKEN,
                            "parser locals must come before the parser's states",
                        )
                        .with_primary(d.span(), "declared after a state"),
                    );
                }
                locals.push(d);
                Ok(())
            })();
            if r.is_err() {
                self.recover();
            }
            if self.pos == before {
                self.bump();
            }
        }
        self.expect_close("}", "{", open)?;
        Ok(Decl::Parser(ParserDecl {
            signature: sig,
            ctor_params,
            locals,
            states,
            span: start.to(self.prev_span),
        }))
    }

    fn state(&mut self, annotations: Vec<Annotation>, start: Span) -> PResult<ParserState> {
        self.bump(); // state
        let name = self.name("a state name")?;
        let open = self.expect("{")?;
        let mut stmts = Vec::new();
        let mut transition = None;
        while !self.at("}") && !self.at_eof() {
            let before = self.pos;
            if self.at_word("transition") {
                match self.transition() {
                    Ok(t) => transition = Some(t),
                    Err(()) => self.recover(),
                }
                if !self.at("}") && !self.at_eof() && transition.is_some() {
                    let t = self.peek().clone();
                    self.push(
                        Diagnostic::error(
                            codes::BAD_TRANSITION,
                            format!(
                                "the transition must be the last statement of state `{}`, found {}",
                                name.name,
                                describe(&t.tok)
                            ),
                        )
                        .with_primary(t.span, "after the transition"),
                    );
                    return Err(());
                }
                continue;
            }
            match self.stmt() {
                Ok(s) => stmts.push(s),
                Err(()) => self.recover(),
            }
            if self.pos == before {
                self.bump();
            }
        }
        self.expect_close("}", "{", open)?;
        Ok(ParserState {
            annotations,
            name,
            stmts,
            transition,
            span: start.to(self.prev_span),
        })
    }

    fn transition(&mut self) -> PResult<Transition> {
        let kw = self.bump();
        if self.at_word("select") {
            self.bump();
            let open = self.expect("(")?;
            let mut exprs = Vec::new();
            if !self.at(")") {
                loop {
                    exprs.push(self.expr()?);
                    if !self.eat(",") {
                        break;
                    }
                }
            }
            self.expect_close(")", "(", open)?;
            let open = self.expect("{")?;
            let mut cases = Vec::new();
            while !self.at("}") && !self.at_eof() {
                let before = self.pos;
                match self.select_case() {
                    Ok(c) => cases.push(c),
                    Err(()) => self.recover(),
                }
                if self.pos == before {
                    self.bump();
                }
            }
            self.expect_close("}", "{", open)?;
            self.eat(";");
            return Ok(Transition::Select {
                exprs,
                cases,
                span: kw.span.to(self.prev_span),
            });
        }
        match &self.peek().tok {
            Tok::Ident(s) if !RESERVED.contains(&s.as_str()) => {
                let target = self.ident_any("a state name")?;
                self.expect_semi("the transition")?;
                Ok(Transition::Direct {
                    target,
                    span: kw.span.to(self.prev_span),
                })
            }
            other => {
                let found = describe(other);
                let span = self.peek().span;
                self.push(
                    Diagnostic::error(
                        codes::BAD_TRANSITION,
                        format!("expected a state name or `select` after `transition`, found {found}"),
                    )
                    .with_primary(span, "not a state")
                    .with_secondary(kw.span, "in this transition")
                    .with_note("write `transition accept;`, `transition reject;`, `transition some_state;` or `transition select(...) { ... }`"),
                );
                Err(())
            }
        }
    }

    fn select_case(&mut self) -> PResult<SelectCase> {
        let start = self.peek().span;
        let keyset = self.keyset()?;
        self.expect(":")?;
        let next = self.name("a state name")?;
        self.expect_semi("the select case")?;
        Ok(SelectCase {
            keyset,
            next,
            span: start.to(self.prev_span),
        })
    }

    fn keyset(&mut self) -> PResult<Keyset> {
        let start = self.peek().span;
        if self.at("(") {
            // A tuple keyset, unless the parenthesis belongs to an expression.
            let save = (self.pos, self.diags.len(), self.prev_span);
            self.bump();
            let mut elems = Vec::new();
            let mut ok = true;
            loop {
                match self.keyset_elem() {
                    Ok(e) => elems.push(e),
                    Err(()) => {
                        ok = false;
                        break;
                    }
                }
                if !self.eat(",") {
                    break;
                }
            }
            if ok && self.eat(")") && self.at(":") {
                let is_tuple = elems.len() > 1;
                return Ok(Keyset {
                    elems,
                    is_tuple,
                    span: start.to(self.prev_span),
                });
            }
            self.pos = save.0;
            self.diags.truncate(save.1);
            self.prev_span = save.2;
        }
        let e = self.keyset_elem()?;
        Ok(Keyset {
            elems: vec![e],
            is_tuple: false,
            span: start.to(self.prev_span),
        })
    }

    fn keyset_elem(&mut self) -> PResult<KeysetElem> {
        if self.at_word("default") {
            return Ok(KeysetElem::Default(self.bump().span));
        }
        if self.at_word("_") {
            return Ok(KeysetElem::DontCare(self.bump().span));
        }
        let value = self.expr()?;
        if self.eat("&&&") {
            let mask = self.expr()?;
            return Ok(KeysetElem::Mask {
                span: value.span.to(mask.span),
                value,
                mask,
            });
        }
        if self.eat("..") {
            let hi = self.expr()?;
            return Ok(KeysetElem::Range {
                span: value.span.to(hi.span),
                lo: value,
                hi,
            });
        }
        Ok(KeysetElem::Expr(value))
    }

    fn control_decl(&mut self, annotations: Vec<Annotation>, start: Span) -> PResult<Decl> {
        self.bump(); // control
        let sig = self.signature(annotations, start)?;
        self.types.insert(sig.name.name.clone());
        let r = self.control_rest(sig, start);
        self.pop_type_scope();
        r
    }

    fn control_rest(&mut self, sig: TypeDeclSignature, start: Span) -> PResult<Decl> {
        if self.eat(";") {
            return Ok(Decl::ControlType(TypeDeclSignature {
                span: start.to(self.prev_span),
                ..sig
            }));
        }
        let ctor_params = if self.at("(") {
            self.params()?
        } else {
            Vec::new()
        };
        let open = self.expect("{")?;
        let mut locals = Vec::new();
        let mut apply = None;
        while !self.at("}") && !self.at_eof() {
            let before = self.pos;
            let r: PResult<()> = (|| {
                let lstart = self.peek().span;
                let annotations = self.annotations()?;
                if self.at_word("apply") && self.is_punct_at(1, "{") {
                    self.bump();
                    let mut b = self.block()?;
                    b.annotations = annotations;
                    if apply.is_some() {
                        self.push(
                            Diagnostic::error(
                                codes::BAD_DECLARATION,
                                format!("control `{}` has two `apply` blocks", sig.name.name),
                            )
                            .with_primary(lstart.to(b.span), "second `apply` block"),
                        );
                    }
                    apply = Some(b);
                    return Ok(());
                }
                let d = self.local_decl(annotations, lstart, true)?;
                locals.push(d);
                Ok(())
            })();
            if r.is_err() {
                self.recover();
            }
            if self.pos == before {
                self.bump();
            }
        }
        self.expect_close("}", "{", open)?;
        let Some(apply) = apply else {
            self.push(
                Diagnostic::error(
                    codes::BAD_DECLARATION,
                    format!("control `{}` has no `apply` block", sig.name.name),
                )
                .with_primary(sig.name.span, "declared here")
                .with_note("a control body ends with `apply { ... }`"),
            );
            return Err(());
        };
        Ok(Decl::Control(ControlDecl {
            signature: sig,
            ctor_params,
            locals,
            apply,
            span: start.to(self.prev_span),
        }))
    }

    /// A local of a parser (`in_control == false`) or control.
    fn local_decl(
        &mut self,
        annotations: Vec<Annotation>,
        start: Span,
        in_control: bool,
    ) -> PResult<Decl> {
        if self.at_word("const") {
            return Ok(Decl::Const(self.const_decl(annotations, start)?));
        }
        if self.at_word("value_set") {
            return self.value_set(annotations, start);
        }
        if in_control && self.at_word("action") {
            return Ok(Decl::Action(self.action_decl(annotations, start)?));
        }
        if in_control && self.at_word("table") {
            return self.table(annotations, start);
        }
        if !in_control && self.at_word("transition") {
            let span = self.peek().span;
            self.push(
                Diagnostic::error(
                    codes::BAD_TRANSITION,
                    "a transition must be inside a `state`",
                )
                .with_primary(span, "outside any state"),
            );
            return Err(());
        }
        self.type_led_decl(annotations, start)
    }

    fn value_set(&mut self, annotations: Vec<Annotation>, start: Span) -> PResult<Decl> {
        self.bump(); // value_set
        let open = self.expect("<")?;
        let elem_type = self.ty()?;
        self.expect_close(">", "<", open)?;
        let open = self.expect("(")?;
        let size = self.expr()?;
        self.expect_close(")", "(", open)?;
        let name = self.name("a value set name")?;
        self.expect_semi("the value set declaration")?;
        Ok(Decl::ValueSet(ValueSetDecl {
            annotations,
            elem_type,
            size,
            name,
            span: start.to(self.prev_span),
        }))
    }

    /// A declaration that starts with a type: a function, an instantiation
    /// or a variable.
    fn type_led_decl(&mut self, annotations: Vec<Annotation>, start: Span) -> PResult<Decl> {
        if let Tok::Ident(w) = &self.peek().tok
            && RESERVED.contains(&w.as_str())
            && !BUILTIN_TYPES.contains(&w.as_str())
            && w != "error"
        {
            self.expected("a declaration");
            return Err(());
        }
        let ty = self.ty()?;
        if self.at("(") {
            return Ok(Decl::Instantiation(self.instantiation_rest(
                annotations,
                ty,
                start,
            )?));
        }
        let name = self.name("a name")?;
        self.declare_value(&name);
        if self.at("(") || self.at("<") {
            let type_params = self.type_params()?;
            self.push_type_scope(&type_params);
            let r = (|| {
                let params = self.params()?;
                let body = self.block()?;
                Ok((params, body))
            })();
            self.pop_type_scope();
            let (params, body) = r?;
            return Ok(Decl::Function(FunctionDecl {
                annotations,
                return_type: ty,
                name,
                type_params,
                params,
                body,
                span: start.to(self.prev_span),
            }));
        }
        let init = if self.eat("=") {
            Some(self.expr()?)
        } else {
            None
        };
        self.expect_semi("the variable declaration")?;
        Ok(Decl::Var(VarDecl {
            annotations,
            ty,
            name,
            init,
            span: start.to(self.prev_span),
        }))
    }

    /// `(args) name [= { ... }];` after the instantiated type.
    fn instantiation_rest(
        &mut self,
        annotations: Vec<Annotation>,
        ty: Type,
        start: Span,
    ) -> PResult<Instantiation> {
        let args = self.args()?;
        let name = self.name("an instance name")?;
        self.declare_value(&name);
        let initializer = if self.eat("=") {
            let open = self.expect("{")?;
            let mut decls = Vec::new();
            while !self.at("}") && !self.at_eof() {
                let before = self.pos;
                let dstart = self.peek().span;
                let r = self
                    .annotations()
                    .and_then(|a| self.type_led_decl(a, dstart));
                match r {
                    Ok(d) => decls.push(d),
                    Err(()) => self.recover(),
                }
                if self.pos == before {
                    self.bump();
                }
            }
            self.expect_close("}", "{", open)?;
            Some(decls)
        } else {
            None
        };
        self.expect_semi("the instantiation")?;
        Ok(Instantiation {
            annotations,
            ty,
            args,
            name,
            initializer,
            span: start.to(self.prev_span),
        })
    }

    fn action_decl(&mut self, annotations: Vec<Annotation>, start: Span) -> PResult<ActionDecl> {
        self.bump(); // action
        let name = self.name("an action name")?;
        self.push_type_scope(&[]);
        let r = self.params().and_then(|p| Ok((p, self.block()?)));
        self.pop_type_scope();
        let (params, body) = r?;
        Ok(ActionDecl {
            annotations,
            name,
            params,
            body,
            span: start.to(self.prev_span),
        })
    }

    // ---- tables ----------------------------------------------------------

    fn table(&mut self, annotations: Vec<Annotation>, start: Span) -> PResult<Decl> {
        self.bump(); // table
        let name = self.name("a table name")?;
        // p4c still accepts the empty parameter list of early P4_16 drafts
        // (`table t() { .. }`); tables never take parameters.
        if self.at("(") {
            self.bump();
            self.expect(")")?;
        }
        let open = self.expect("{")?;
        let mut properties = Vec::new();
        while !self.at("}") && !self.at_eof() {
            let before = self.pos;
            match self.table_property() {
                Ok(p) => properties.push(p),
                Err(()) => self.recover(),
            }
            if self.pos == before {
                self.bump();
            }
        }
        self.expect_close("}", "{", open)?;
        Ok(Decl::Table(TableDecl {
            annotations,
            name,
            properties,
            span: start.to(self.prev_span),
        }))
    }

    fn table_property(&mut self) -> PResult<TableProperty> {
        let start = self.peek().span;
        let annotations = self.annotations()?;
        let is_const = self.eat_word("const");
        let name = self.ident_any("a table property")?;
        self.expect("=")?;
        let kind = match name.name.as_str() {
            "key" => {
                let open = self.expect("{")?;
                let mut elems = Vec::new();
                while !self.at("}") && !self.at_eof() {
                    let before = self.pos;
                    match self.key_element() {
                        Ok(k) => elems.push(k),
                        Err(()) => self.recover(),
                    }
                    if self.pos == before {
                        self.bump();
                    }
                }
                self.expect_close("}", "{", open)?;
                self.eat(";");
                TablePropertyKind::Key(elems)
            }
            "actions" => {
                let open = self.expect("{")?;
                let mut refs = Vec::new();
                while !self.at("}") && !self.at_eof() {
                    let before = self.pos;
                    let r = (|| {
                        let rstart = self.peek().span;
                        let annotations = self.annotations()?;
                        let r = self.action_ref(annotations, rstart)?;
                        self.expect_semi("the action reference")?;
                        Ok(r)
                    })();
                    match r {
                        Ok(a) => refs.push(a),
                        Err(()) => self.recover(),
                    }
                    if self.pos == before {
                        self.bump();
                    }
                }
                self.expect_close("}", "{", open)?;
                self.eat(";");
                TablePropertyKind::Actions(refs)
            }
            "entries" => {
                let open = self.expect("{")?;
                let mut entries = Vec::new();
                while !self.at("}") && !self.at_eof() {
                    let before = self.pos;
                    match self.entry() {
                        Ok(e) => entries.push(e),
                        Err(()) => self.recover(),
                    }
                    if self.pos == before {
                        self.bump();
                    }
                }
                self.expect_close("}", "{", open)?;
                self.eat(";");
                TablePropertyKind::Entries(entries)
            }
            other => {
                let value = self.expr()?;
                self.expect_semi(&format!("table property `{other}`"))?;
                match other {
                    "default_action" => TablePropertyKind::DefaultAction(value),
                    "size" => TablePropertyKind::Size(value),
                    "implementation" => TablePropertyKind::Implementation(value),
                    "counters" => TablePropertyKind::Counters(value),
                    "meters" => TablePropertyKind::Meters(value),
                    "support_timeout" => TablePropertyKind::SupportTimeout(value),
                    _ => TablePropertyKind::Custom { name, value },
                }
            }
        };
        Ok(TableProperty {
            annotations,
            is_const,
            kind,
            span: start.to(self.prev_span),
        })
    }

    fn key_element(&mut self) -> PResult<KeyElement> {
        let start = self.peek().span;
        let mut annotations = self.annotations()?;
        let expr = self.expr()?;
        self.expect(":")?;
        let match_kind = self.ident_any("a match kind")?;
        annotations.extend(self.annotations()?);
        self.expect_semi("the key element")?;
        Ok(KeyElement {
            annotations,
            expr,
            match_kind,
            span: start.to(self.prev_span),
        })
    }

    fn action_ref(&mut self, annotations: Vec<Annotation>, start: Span) -> PResult<ActionRef> {
        let name = self.path_name("an action name")?;
        let args = if self.at("(") {
            Some(self.args()?)
        } else {
            None
        };
        Ok(ActionRef {
            annotations,
            name,
            args,
            span: start.to(self.prev_span),
        })
    }

    fn entry(&mut self) -> PResult<TableEntry> {
        let start = self.peek().span;
        let mut is_const = self.eat_word("const");
        let mut annotations = self.annotations()?;
        is_const |= self.eat_word("const");
        let priority = if self.at_word("priority") && self.is_punct_at(1, "=") {
            self.bump();
            self.bump();
            let p = self.expr()?;
            self.expect(":")?;
            Some(p)
        } else {
            None
        };
        let keyset = self.keyset()?;
        self.expect(":")?;
        let astart = self.peek().span;
        let action = self.action_ref(Vec::new(), astart)?;
        annotations.extend(self.annotations()?);
        self.expect_semi("the table entry")?;
        Ok(TableEntry {
            annotations,
            is_const,
            priority,
            keyset,
            action,
            span: start.to(self.prev_span),
        })
    }

    // ---- statements ------------------------------------------------------

    fn block(&mut self) -> PResult<Block> {
        let open = self.expect("{")?;
        let mut stmts = Vec::new();
        while !self.at("}") && !self.at_eof() {
            let before = self.pos;
            match self.stmt() {
                Ok(s) => stmts.push(s),
                Err(()) => self.recover(),
            }
            if self.pos == before {
                self.bump();
            }
        }
        self.expect_close("}", "{", open)?;
        Ok(Block {
            annotations: Vec::new(),
            stmts,
            span: open.to(self.prev_span),
        })
    }

    fn stmt(&mut self) -> PResult<Stmt> {
        self.enter()?;
        let r = self.stmt_inner();
        self.leave();
        r
    }

    fn stmt_inner(&mut self) -> PResult<Stmt> {
        let start = self.peek().span;
        let annotations = self.annotations()?;
        let kind = if self.at("{") {
            let mut b = self.block()?;
            b.annotations = annotations;
            StmtKind::Block(b)
        } else if self.eat(";") {
            StmtKind::Empty
        } else if self.at_word("if") {
            self.bump();
            let open = self.expect("(")?;
            let cond = self.expr()?;
            self.expect_close(")", "(", open)?;
            let then_branch = Box::new(self.stmt()?);
            let else_branch = if self.eat_word("else") {
                Some(Box::new(self.stmt()?))
            } else {
                None
            };
            StmtKind::If {
                cond,
                then_branch,
                else_branch,
            }
        } else if self.at_word("switch") {
            self.switch()?
        } else if self.at_word("exit") {
            self.bump();
            self.expect_semi("`exit`")?;
            StmtKind::Exit
        } else if self.at_word("return") {
            self.bump();
            let value = if self.at(";") {
                None
            } else {
                Some(self.expr()?)
            };
            self.expect_semi("the return statement")?;
            StmtKind::Return(value)
        } else if self.at_word("const") {
            StmtKind::Const(self.const_decl(annotations, start)?)
        } else if self.at_word("transition") {
            let span = self.peek().span;
            self.push(
                Diagnostic::error(
                    codes::BAD_TRANSITION,
                    "`transition` is only allowed as the last statement of a parser state",
                )
                .with_primary(span, "not allowed here"),
            );
            return Err(());
        } else if self.at_word("for") && self.is_punct_at(1, "(") {
            self.for_stmt()?
        } else if (self.at_word("break") || self.at_word("continue")) && self.is_punct_at(1, ";") {
            let brk = self.at_word("break");
            self.bump();
            self.bump();
            if brk {
                StmtKind::Break
            } else {
                StmtKind::Continue
            }
        } else if self.starts_declaration() {
            let ty = self.ty()?;
            if self.at("(") {
                StmtKind::Instantiation(self.instantiation_rest(annotations, ty, start)?)
            } else {
                let kind = self.var_decl_rest(annotations, ty, start)?;
                self.expect_semi("the variable declaration")?;
                kind
            }
        } else {
            let e = self.expr()?;
            if let Some(kind) = self.assignment_rest(&e)? {
                self.expect_semi("the assignment")?;
                kind
            } else if matches!(e.kind, ExprKind::Call { .. }) {
                self.expect_semi("the call")?;
                StmtKind::Call(e)
            } else {
                let t = self.peek().clone();
                let mut d = Diagnostic::error(
                    codes::UNEXPECTED_TOKEN,
                    format!(
                        "expected `=` or a call after this expression, found {}",
                        describe(&t.tok)
                    ),
                )
                .with_primary(t.span, "unexpected token")
                .with_secondary(e.span, "this expression is not a statement");
                if let (ExprKind::Name(n), Tok::Ident(_)) = (&e.kind, &t.tok) {
                    d = d.with_note(format!(
                        "if `{}` is a type, it must be declared before it is used",
                        n.ident.name
                    ));
                }
                self.push(d);
                return Err(());
            }
        };
        Ok(Stmt {
            kind,
            span: start.to(self.prev_span),
        })
    }

    /// `name [= init]` after a variable's type (no `;`).
    fn var_decl_rest(
        &mut self,
        annotations: Vec<Annotation>,
        ty: Type,
        start: Span,
    ) -> PResult<StmtKind> {
        let name = self.name("a variable name")?;
        self.declare_value(&name);
        let init = if self.eat("=") {
            Some(self.expr()?)
        } else {
            None
        };
        Ok(StmtKind::Var(VarDecl {
            annotations,
            ty,
            name,
            init,
            span: start.to(self.prev_span),
        }))
    }

    /// The compound-assignment operator at the cursor and its token count.
    fn peek_compound_assign(&self) -> Option<(BinaryOp, usize)> {
        let Tok::Punct(p) = &self.peek().tok else {
            return None;
        };
        use BinaryOp::*;
        Some(match *p {
            "+=" => (Add, 1),
            "-=" => (Sub, 1),
            "*=" => (Mul, 1),
            "/=" => (Div, 1),
            "%=" => (Mod, 1),
            "&=" => (BitAnd, 1),
            "|=" => (BitOr, 1),
            "^=" => (BitXor, 1),
            "<<=" => (Shl, 1),
            "|+|=" => (AddSat, 1),
            "|-|=" => (SubSat, 1),
            ">" if self.is_punct_at(1, ">=") && self.peek_at(1).lo == self.peek().hi => (Shr, 2),
            _ => return None,
        })
    }

    /// `= rhs` or `op= rhs` after a left-hand side (no `;`); `None` when
    /// neither follows.
    fn assignment_rest(&mut self, lhs: &Expr) -> PResult<Option<StmtKind>> {
        if self.eat("=") {
            let rhs = self.expr()?;
            return Ok(Some(StmtKind::Assign {
                lhs: lhs.clone(),
                rhs,
            }));
        }
        let Some((op, ntoks)) = self.peek_compound_assign() else {
            return Ok(None);
        };
        for _ in 0..ntoks {
            self.bump();
        }
        let rhs = self.expr()?;
        Ok(Some(StmtKind::CompoundAssign {
            op,
            lhs: lhs.clone(),
            rhs,
        }))
    }

    /// One initialiser or update of a `for`: a declaration, an assignment
    /// or a call, without its `;`.
    fn for_simple_stmt(&mut self) -> PResult<Stmt> {
        let start = self.peek().span;
        let annotations = self.annotations()?;
        let kind = if self.starts_declaration() {
            let ty = self.ty()?;
            self.var_decl_rest(annotations, ty, start)?
        } else {
            let e = self.expr()?;
            match self.assignment_rest(&e)? {
                Some(k) => k,
                None if matches!(e.kind, ExprKind::Call { .. }) => StmtKind::Call(e),
                None => {
                    self.expected("an assignment or a call");
                    return Err(());
                }
            }
        };
        Ok(Stmt {
            kind,
            span: start.to(self.prev_span),
        })
    }

    /// Whether the `for (` at the cursor is a `for (T x in ...)`: an `in`
    /// before the first `;` at parenthesis depth 1.
    fn for_is_in(&self) -> bool {
        let mut depth = 0usize;
        let mut n = 1;
        loop {
            match &self.peek_at(n).tok {
                Tok::Eof => return false,
                Tok::Punct("(" | "[" | "{") => depth += 1,
                Tok::Punct(")" | "]" | "}") => {
                    if depth <= 1 {
                        return false;
                    }
                    depth -= 1;
                }
                Tok::Punct(";") if depth == 1 => return false,
                Tok::Ident(w) if w == "in" && depth == 1 => return true,
                _ => {}
            }
            n += 1;
        }
    }

    /// `for (...) body`, both forms.
    fn for_stmt(&mut self) -> PResult<StmtKind> {
        let is_in = self.for_is_in();
        self.bump(); // for
        let open = self.expect("(")?;
        if is_in {
            let ty = if matches!(self.peek().tok, Tok::Ident(_)) && self.is_word_at(1, "in") {
                None
            } else {
                Some(self.ty()?)
            };
            let name = self.name("the loop variable")?;
            self.declare_value(&name);
            if !self.eat_word("in") {
                self.expected("`in`");
                return Err(());
            }
            let collection = self.expr()?;
            let range_end = if self.eat("..") {
                Some(self.expr()?)
            } else {
                None
            };
            self.expect_close(")", "(", open)?;
            let body = Box::new(self.stmt()?);
            return Ok(StmtKind::ForIn {
                ty,
                name,
                collection,
                range_end,
                body,
            });
        }
        let mut init = Vec::new();
        while !self.at(";") {
            init.push(self.for_simple_stmt()?);
            if !self.eat(",") {
                break;
            }
        }
        self.expect(";")?;
        let cond = if self.at(";") {
            None
        } else {
            Some(self.expr()?)
        };
        self.expect(";")?;
        let mut update = Vec::new();
        while !self.at(")") {
            update.push(self.for_simple_stmt()?);
            if !self.eat(",") {
                break;
            }
        }
        self.expect_close(")", "(", open)?;
        let body = Box::new(self.stmt()?);
        Ok(StmtKind::For {
            init,
            cond,
            update,
            body,
        })
    }

    fn switch(&mut self) -> PResult<StmtKind> {
        self.bump(); // switch
        let open = self.expect("(")?;
        let expr = self.expr()?;
        self.expect_close(")", "(", open)?;
        let open = self.expect("{")?;
        let mut cases = Vec::new();
        while !self.at("}") && !self.at_eof() {
            let before = self.pos;
            let r = (|| {
                let start = self.peek().span;
                let label = if self.at_word("default") {
                    SwitchLabel::Default(self.bump().span)
                } else {
                    SwitchLabel::Expr(self.expr()?)
                };
                self.expect(":")?;
                let body = if self.at("{") {
                    Some(self.block()?)
                } else {
                    None
                };
                Ok(SwitchCase {
                    label,
                    body,
                    span: start.to(self.prev_span),
                })
            })();
            match r {
                Ok(c) => cases.push(c),
                Err(()) => self.recover(),
            }
            if self.pos == before {
                self.bump();
            }
        }
        self.expect_close("}", "{", open)?;
        Ok(StmtKind::Switch { expr, cases })
    }

    // ---- expressions -----------------------------------------------------

    fn expr(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.ternary();
        self.leave();
        r
    }

    fn ternary(&mut self) -> PResult<Expr> {
        let cond = self.binary(1)?;
        if !self.eat("?") {
            return Ok(cond);
        }
        let then_expr = self.expr()?;
        self.expect(":")?;
        let else_expr = self.expr()?;
        Ok(Expr {
            span: cond.span.to(else_expr.span),
            kind: ExprKind::Ternary {
                cond: Box::new(cond),
                then_expr: Box::new(then_expr),
                else_expr: Box::new(else_expr),
            },
        })
    }

    /// The binary operator at the cursor and how many tokens it spans.
    fn peek_binop(&self) -> Option<(BinaryOp, usize)> {
        let Tok::Punct(p) = &self.peek().tok else {
            return None;
        };
        use BinaryOp::*;
        Some(match *p {
            "*" => (Mul, 1),
            "/" => (Div, 1),
            "%" => (Mod, 1),
            // `+:` of an indexed slice `e[lo +: w]` ends the low bound.
            "+" if self.is_punct_at(1, ":") && self.peek_at(1).lo == self.peek().hi => {
                return None;
            }
            "+" => (Add, 1),
            "-" => (Sub, 1),
            "|+|" => (AddSat, 1),
            "|-|" => (SubSat, 1),
            "++" => (Concat, 1),
            "<<" => (Shl, 1),
            ">" if self.is_punct_at(1, ">") && self.peek_at(1).lo == self.peek().hi => (Shr, 2),
            // `>>=`: a compound assignment, which ends the expression.
            ">" if self.is_punct_at(1, ">=") && self.peek_at(1).lo == self.peek().hi => {
                return None;
            }
            ">" => (Gt, 1),
            "<" => (Lt, 1),
            "<=" => (Le, 1),
            ">=" => (Ge, 1),
            "==" => (Eq, 1),
            "!=" => (Ne, 1),
            "&" => (BitAnd, 1),
            "^" => (BitXor, 1),
            "|" => (BitOr, 1),
            "&&" => (And, 1),
            "||" => (Or, 1),
            _ => return None,
        })
    }

    fn binary(&mut self, min_prec: u8) -> PResult<Expr> {
        let mut lhs = self.unary()?;
        while let Some((op, ntoks)) = self.peek_binop() {
            let prec = op.precedence();
            if prec < min_prec {
                break;
            }
            for _ in 0..ntoks {
                self.bump();
            }
            self.enter()?;
            let rhs = self.binary(prec + 1);
            self.leave();
            let rhs = rhs?;
            lhs = Expr {
                span: lhs.span.to(rhs.span),
                kind: ExprKind::Binary {
                    op,
                    lhs: Box::new(lhs),
                    rhs: Box::new(rhs),
                },
            };
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> PResult<Expr> {
        let start = self.peek().span;
        let op = match &self.peek().tok {
            Tok::Punct("!") => Some(UnaryOp::Not),
            Tok::Punct("~") => Some(UnaryOp::Complement),
            Tok::Punct("-") => Some(UnaryOp::Neg),
            Tok::Punct("+") => Some(UnaryOp::Plus),
            _ => None,
        };
        if let Some(op) = op {
            self.bump();
            self.enter()?;
            let operand = self.unary();
            self.leave();
            let operand = operand?;
            return Ok(Expr {
                span: start.to(operand.span),
                kind: ExprKind::Unary {
                    op,
                    operand: Box::new(operand),
                },
            });
        }
        if self.at("(") && self.looks_like_cast() {
            let save = (self.pos, self.diags.len(), self.prev_span);
            self.bump();
            if let Ok(ty) = self.ty()
                && self.eat(")")
                && self.starts_operand()
            {
                self.enter()?;
                let operand = self.unary();
                self.leave();
                let operand = operand?;
                return Ok(Expr {
                    span: start.to(operand.span),
                    kind: ExprKind::Cast {
                        ty,
                        expr: Box::new(operand),
                    },
                });
            }
            self.pos = save.0;
            self.diags.truncate(save.1);
            self.prev_span = save.2;
        }
        self.postfix()
    }

    /// After `(`: does a type follow?
    fn looks_like_cast(&self) -> bool {
        match &self.peek_at(1).tok {
            Tok::Ident(w) if w == "error" => self.is_punct_at(2, ")"),
            Tok::Ident(w) if w == "list" => self.is_punct_at(2, "<") || self.is_type_name(w),
            Tok::Ident(w) => {
                (BUILTIN_TYPES.contains(&w.as_str()) && w != "void") || self.is_type_name(w)
            }
            Tok::Punct(".") => {
                matches!(&self.peek_at(2).tok, Tok::Ident(w) if self.is_type_name(w))
            }
            _ => false,
        }
    }

    /// Whether the cursor can start the operand of a cast.
    fn starts_operand(&self) -> bool {
        match &self.peek().tok {
            Tok::Ident(w) => !matches!(w.as_str(), "else"),
            Tok::Int(_) | Tok::Str(_) => true,
            Tok::Punct(p) => matches!(*p, "(" | "{" | "{#}" | "!" | "~" | "-" | "+" | "."),
            Tok::Eof => false,
        }
    }

    fn postfix(&mut self) -> PResult<Expr> {
        let mut e = self.primary()?;
        loop {
            if self.at(".") {
                self.bump();
                let member = self.ident_any("a member name after `.`")?;
                e = Expr {
                    span: e.span.to(member.span),
                    kind: ExprKind::Member {
                        base: Box::new(e),
                        member,
                    },
                };
            } else if self.at("[") {
                let open = self.bump().span;
                let first = self.expr()?;
                if self.at("+") && self.is_punct_at(1, ":") {
                    // `e[lo +: w]` (P4_16 v1.2.5 §8.6): the `w` bits from
                    // `lo` up, that is `e[lo + w - 1 : lo]`; the checker
                    // takes a run-time `lo` too (`width` keeps `w`).
                    self.bump();
                    self.bump();
                    let width = self.expr()?;
                    self.expect_close("]", "[", open)?;
                    let span = first.span.to(width.span);
                    let one = Expr {
                        span,
                        kind: ExprKind::Int(IntLit {
                            value: 1,
                            wide: None,
                            negative: false,
                            width: None,
                            radix: 10,
                            raw: "1".to_string(),
                        }),
                    };
                    let sum = Expr {
                        span,
                        kind: ExprKind::Binary {
                            op: BinaryOp::Add,
                            lhs: Box::new(first.clone()),
                            rhs: Box::new(width.clone()),
                        },
                    };
                    let hi = Expr {
                        span,
                        kind: ExprKind::Binary {
                            op: BinaryOp::Sub,
                            lhs: Box::new(sum),
                            rhs: Box::new(one),
                        },
                    };
                    e = Expr {
                        span: e.span.to(self.prev_span),
                        kind: ExprKind::Slice {
                            base: Box::new(e),
                            hi: Box::new(hi),
                            lo: Box::new(first),
                            width: Some(Box::new(width)),
                        },
                    };
                } else if self.eat(":") {
                    let lo = self.expr()?;
                    self.expect_close("]", "[", open)?;
                    e = Expr {
                        span: e.span.to(self.prev_span),
                        kind: ExprKind::Slice {
                            base: Box::new(e),
                            hi: Box::new(first),
                            lo: Box::new(lo),
                            width: None,
                        },
                    };
                } else {
                    self.expect_close("]", "[", open)?;
                    e = Expr {
                        span: e.span.to(self.prev_span),
                        kind: ExprKind::Index {
                            base: Box::new(e),
                            index: Box::new(first),
                        },
                    };
                }
            } else if self.at("(") {
                let args = self.args()?;
                e = Expr {
                    span: e.span.to(self.prev_span),
                    kind: ExprKind::Call {
                        callee: Box::new(e),
                        type_args: Vec::new(),
                        args,
                    },
                };
            } else if self.at("<") && matches!(e.kind, ExprKind::Name(_) | ExprKind::Member { .. })
            {
                match self.try_type_args_call() {
                    Some(type_args) => {
                        let args = self.args()?;
                        e = Expr {
                            span: e.span.to(self.prev_span),
                            kind: ExprKind::Call {
                                callee: Box::new(e),
                                type_args,
                                args,
                            },
                        };
                    }
                    None => break,
                }
            } else {
                break;
            }
        }
        Ok(e)
    }

    /// At `<`: parses `<types>` if it is followed by `(` and starts with
    /// something that can only be a type; otherwise leaves the cursor.
    fn try_type_args_call(&mut self) -> Option<Vec<Type>> {
        let first_is_type = match &self.peek_at(1).tok {
            Tok::Ident(w) => {
                BUILTIN_TYPES.contains(&w.as_str())
                    || w == "error"
                    || w == "_"
                    || self.is_type_name(w)
            }
            Tok::Punct(".") => true,
            _ => false,
        };
        if !first_is_type {
            return None;
        }
        let save = (self.pos, self.diags.len(), self.prev_span);
        self.bump();
        let mut out = Vec::new();
        let ok = loop {
            match self.ty() {
                Ok(t) => out.push(t),
                Err(()) => break false,
            }
            if !self.eat(",") {
                break self.eat(">") && self.at("(");
            }
        };
        if ok {
            return Some(out);
        }
        // A depth error halted parsing; keep it rather than backtracking.
        if self.pos >= self.toks.len() && self.diags.len() > save.1 {
            return None;
        }
        self.pos = save.0;
        self.diags.truncate(save.1);
        self.prev_span = save.2;
        None
    }

    fn args(&mut self) -> PResult<Vec<Argument>> {
        let open = self.expect("(")?;
        let mut out = Vec::new();
        if !self.at(")") {
            loop {
                let start = self.peek().span;
                let name = if matches!(self.peek().tok, Tok::Ident(_)) && self.is_punct_at(1, "=") {
                    let n = self.ident_any("an argument name")?;
                    self.bump();
                    Some(n)
                } else {
                    None
                };
                let value = self.expr()?;
                out.push(Argument {
                    name,
                    span: start.to(value.span),
                    value,
                });
                if !self.eat(",") {
                    break;
                }
            }
        }
        self.expect_close(")", "(", open)?;
        Ok(out)
    }

    fn primary(&mut self) -> PResult<Expr> {
        let t = self.peek().clone();
        let kind = match &t.tok {
            Tok::Int(i) => {
                self.bump();
                ExprKind::Int(i.clone())
            }
            Tok::Str(s) => {
                self.bump();
                ExprKind::Str(s.clone())
            }
            Tok::Punct("...") => {
                self.bump();
                ExprKind::DotDotDot
            }
            Tok::Punct("{#}") => {
                self.bump();
                ExprKind::Invalid
            }
            Tok::Punct("(") => {
                let open = self.bump().span;
                let inner = self.expr()?;
                self.expect_close(")", "(", open)?;
                // Keep the parentheses in the span, not in the tree.
                return Ok(Expr {
                    kind: inner.kind,
                    span: open.to(self.prev_span),
                });
            }
            Tok::Punct("{") => return self.brace_expr(),
            Tok::Punct(".") => {
                let n = self.path_name("a name after `.`")?;
                ExprKind::Name(n)
            }
            Tok::Ident(w) => match w.as_str() {
                "true" => {
                    self.bump();
                    ExprKind::Bool(true)
                }
                "false" => {
                    self.bump();
                    ExprKind::Bool(false)
                }
                "this" => {
                    self.bump();
                    ExprKind::This
                }
                "default" => {
                    self.bump();
                    ExprKind::Default
                }
                "_" => {
                    self.bump();
                    ExprKind::DontCare
                }
                "error" | "bit" | "int" | "varbit" | "bool" | "string" | "tuple" | "match_kind" => {
                    // Type keywords used as values: `error.NoMatch`,
                    // `bit<8>` as a type argument's base, `int` in `(int)`.
                    let ident = self.ident_any("a name")?;
                    ExprKind::Name(PathName {
                        top_level: false,
                        span: ident.span,
                        ident,
                    })
                }
                w if RESERVED.contains(&w) => {
                    self.expected("an expression");
                    return Err(());
                }
                _ => {
                    let ident = self.ident_any("a name")?;
                    ExprKind::Name(PathName {
                        top_level: false,
                        span: ident.span,
                        ident,
                    })
                }
            },
            _ => {
                self.expected("an expression");
                return Err(());
            }
        };
        Ok(Expr {
            kind,
            span: t.span.to(self.prev_span),
        })
    }

    /// `{ a = 1, b = 2 }` or `{ a, b }`.
    fn brace_expr(&mut self) -> PResult<Expr> {
        let open = self.bump().span;
        let is_struct = matches!(self.peek().tok, Tok::Ident(_)) && self.is_punct_at(1, "=");
        let mut items = Vec::new();
        let mut fields = Vec::new();
        while !self.at("}") && !self.at_eof() {
            if is_struct && self.at("...") {
                // `{ a = 1, ... }`: the rest take default values; kept as
                // an entry named `...` whose value is `...`.
                let span = self.bump().span;
                fields.push(NamedExpr {
                    span,
                    name: Ident {
                        name: "...".to_string(),
                        span,
                    },
                    value: Expr {
                        kind: ExprKind::DotDotDot,
                        span,
                    },
                });
            } else if is_struct {
                let name = self.ident_any("a field name")?;
                self.expect("=")?;
                let value = self.expr()?;
                fields.push(NamedExpr {
                    span: name.span.to(value.span),
                    name,
                    value,
                });
            } else {
                items.push(self.expr()?);
            }
            if !self.eat(",") {
                break;
            }
        }
        self.expect_close("}", "{", open)?;
        Ok(Expr {
            kind: if is_struct {
                ExprKind::StructInit(fields)
            } else {
                ExprKind::List(items)
            },
            span: open.to(self.prev_span),
        })
    }
}

/// Whether an annotation's body is one string: a literal, or literals
/// joined by `++` (P4_16 §8.8 string concatenation). Bodies that did not
/// parse as expressions are left to the checker.
fn string_annotation_ok(body: &AnnotationBody) -> bool {
    fn string(e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Str(_) => true,
            ExprKind::Binary {
                op: BinaryOp::Concat,
                lhs,
                rhs,
            } => string(lhs) && string(rhs),
            _ => false,
        }
    }
    match body {
        AnnotationBody::Unstructured {
            exprs: Some(exprs), ..
        } => exprs.len() == 1 && string(&exprs[0]),
        AnnotationBody::Unstructured { exprs: None, .. } => true,
        AnnotationBody::Structured { .. } | AnnotationBody::Empty => false,
    }
}
