//! Types: `bit<W>`, named and specialized types, tuples, stacks, and telling a declaration from an
//! expression at the start of a statement.

use crate::front::ast::*;
use crate::front::lexer::Tok;

use super::{BUILTIN_TYPES, PResult, Parser};

impl Parser<'_> {
    pub(super) fn ty(&mut self) -> PResult<Type> {
        self.enter()?;
        let r = self.ty_inner();
        self.leave();
        r
    }

    pub(super) fn ty_inner(&mut self) -> PResult<Type> {
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
    pub(super) fn width(&mut self) -> PResult<Expr> {
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
    pub(super) fn starts_declaration(&self) -> bool {
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
}
