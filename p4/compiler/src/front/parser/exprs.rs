//! Expressions by precedence climbing: ternary, binary, unary, casts, postfix members, indices,
//! slices and calls, primaries and brace lists (P4_16 §8).

use crate::front::ast::*;
use crate::front::lexer::Tok;

use super::{BUILTIN_TYPES, PResult, Parser, RESERVED};

impl Parser<'_> {
    pub(super) fn expr(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.ternary();
        self.leave();
        r
    }

    pub(super) fn ternary(&mut self) -> PResult<Expr> {
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
    pub(super) fn peek_binop(&self) -> Option<(BinaryOp, usize)> {
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

    pub(super) fn binary(&mut self, min_prec: u8) -> PResult<Expr> {
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

    pub(super) fn unary(&mut self) -> PResult<Expr> {
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
    pub(super) fn looks_like_cast(&self) -> bool {
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
    pub(super) fn starts_operand(&self) -> bool {
        match &self.peek().tok {
            Tok::Ident(w) => !matches!(w.as_str(), "else"),
            Tok::Int(_) | Tok::Str(_) => true,
            Tok::Punct(p) => matches!(*p, "(" | "{" | "{#}" | "!" | "~" | "-" | "+" | "."),
            Tok::Eof => false,
        }
    }

    pub(super) fn postfix(&mut self) -> PResult<Expr> {
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
    pub(super) fn try_type_args_call(&mut self) -> Option<Vec<Type>> {
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

    pub(super) fn args(&mut self) -> PResult<Vec<Argument>> {
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

    pub(super) fn primary(&mut self) -> PResult<Expr> {
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
    pub(super) fn brace_expr(&mut self) -> PResult<Expr> {
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
