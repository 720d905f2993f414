//! Parser declarations: states, transitions, `select` cases and keysets (P4_16 §13).

use crate::diag::{Diagnostic, Span, codes};
use crate::front::ast::*;
use crate::front::lexer::Tok;

use super::{PResult, Parser, RESERVED, describe};

impl Parser<'_> {
    /// `parser Name<..>(..)`, then `;` (a parser type) or a parser with its locals and states.
    pub(super) fn parser_decl(
        &mut self,
        annotations: Vec<Annotation>,
        start: Span,
    ) -> PResult<Decl> {
        self.block_decl(annotations, start, Self::parser_rest)
    }

    fn parser_rest(&mut self, sig: TypeDeclSignature, start: Span) -> PResult<Decl> {
        let mut locals = Vec::new();
        let mut states = Vec::new();
        let body = self.block_body(|p, annotations, lstart| {
            if p.at_word("state") && matches!(p.peek_at(1).tok, Tok::Ident(_)) {
                states.push(p.state(annotations, lstart)?);
                return Ok(());
            }
            let d = p.local_decl(annotations, lstart, false)?;
            if !states.is_empty() {
                // P4_16 grammar: parserLocalElements come before parserStates.
                p.push(
                    Diagnostic::error(
                        codes::UNEXPECTED_TOKEN,
                        "parser locals must come before the parser's states",
                    )
                    .with_primary(d.span(), "declared after a state"),
                );
            }
            locals.push(d);
            Ok(())
        })?;
        let Some(ctor_params) = body else {
            return Ok(Decl::ParserType(TypeDeclSignature {
                span: start.to(self.prev_span),
                ..sig
            }));
        };
        Ok(Decl::Parser(ParserDecl {
            signature: sig,
            ctor_params,
            locals,
            states,
            span: start.to(self.prev_span),
        }))
    }

    pub(super) fn state(
        &mut self,
        annotations: Vec<Annotation>,
        start: Span,
    ) -> PResult<ParserState> {
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

    pub(super) fn transition(&mut self) -> PResult<Transition> {
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
            let (cases, _) = self.braced(Self::select_case)?;
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

    pub(super) fn select_case(&mut self) -> PResult<SelectCase> {
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

    pub(super) fn keyset(&mut self) -> PResult<Keyset> {
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

    pub(super) fn keyset_elem(&mut self) -> PResult<KeysetElem> {
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
}
