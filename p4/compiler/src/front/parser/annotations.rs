//! Annotations: `@name(...)`, unstructured bodies kept as tokens and text, structured `[k=v, ...]`
//! bodies (P4_16 §18).

use crate::diag::{Diagnostic, codes};
use crate::front::ast::*;
use crate::front::lexer::{Tok, Token};

use super::{PResult, Parser, describe};

impl Parser<'_> {
    pub(super) fn annotations(&mut self) -> PResult<Vec<Annotation>> {
        let mut out = Vec::new();
        while self.at("@") {
            out.push(self.annotation()?);
        }
        Ok(out)
    }

    pub(super) fn annotation(&mut self) -> PResult<Annotation> {
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
    pub(super) fn expr_list_to_end(&mut self) -> Option<Vec<Expr>> {
        let mut out = Vec::new();
        while !self.at_eof() {
            out.push(self.expr().ok()?);
            if !self.eat(",") {
                break;
            }
        }
        self.at_eof().then_some(out)
    }

    pub(super) fn structured_body(&mut self) -> (Vec<Expr>, Vec<NamedExpr>) {
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
