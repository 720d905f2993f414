//! Statements: blocks, declarations, assignments (compound ones too), `if`, `for`, `switch`,
//! `return`, `exit` (P4_16 §12).

use crate::diag::{Diagnostic, Span, codes};
use crate::front::ast::*;
use crate::front::lexer::Tok;

use super::{PResult, Parser, describe};

impl Parser<'_> {
    pub(super) fn block(&mut self) -> PResult<Block> {
        let (stmts, open) = self.braced(Self::stmt)?;
        Ok(Block {
            annotations: Vec::new(),
            stmts,
            span: open.to(self.prev_span),
        })
    }

    pub(super) fn stmt(&mut self) -> PResult<Stmt> {
        self.enter()?;
        let r = self.stmt_inner();
        self.leave();
        r
    }

    pub(super) fn stmt_inner(&mut self) -> PResult<Stmt> {
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
    pub(super) fn var_decl_rest(
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
    pub(super) fn peek_compound_assign(&self) -> Option<(BinaryOp, usize)> {
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
    pub(super) fn assignment_rest(&mut self, lhs: &Expr) -> PResult<Option<StmtKind>> {
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
    pub(super) fn for_simple_stmt(&mut self) -> PResult<Stmt> {
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
    pub(super) fn for_is_in(&self) -> bool {
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
    pub(super) fn for_stmt(&mut self) -> PResult<StmtKind> {
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

    pub(super) fn switch(&mut self) -> PResult<StmtKind> {
        self.bump(); // switch
        let open = self.expect("(")?;
        let expr = self.expr()?;
        self.expect_close(")", "(", open)?;
        let (cases, _) = self.braced(|p| {
            let start = p.peek().span;
            let label = if p.at_word("default") {
                SwitchLabel::Default(p.bump().span)
            } else {
                SwitchLabel::Expr(p.expr()?)
            };
            p.expect(":")?;
            let body = if p.at("{") { Some(p.block()?) } else { None };
            Ok(SwitchCase {
                label,
                body,
                span: start.to(p.prev_span),
            })
        })?;
        Ok(StmtKind::Switch { expr, cases })
    }
}
