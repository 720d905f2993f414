//! The program and its top-level declarations: constants, typedefs, headers, structs, enums,
//! error/match_kind lists, externs, and the parameter lists and signatures they share.

use crate::diag::{Diagnostic, Span, codes};
use crate::front::ast::*;
use crate::front::lexer::Tok;

use super::{PResult, Parser};

impl Parser<'_> {
    pub(super) fn program(&mut self) -> Program {
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
    pub(super) fn top_decl(&mut self) -> PResult<Option<Decl>> {
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

    pub(super) fn const_decl(
        &mut self,
        annotations: Vec<Annotation>,
        start: Span,
    ) -> PResult<ConstDecl> {
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

    pub(super) fn typedef(&mut self, annotations: Vec<Annotation>, start: Span) -> PResult<Decl> {
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

    pub(super) fn struct_like(
        &mut self,
        annotations: Vec<Annotation>,
        start: Span,
    ) -> PResult<Decl> {
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

    pub(super) fn fields(&mut self) -> PResult<Vec<Field>> {
        Ok(self.braced(Self::field)?.0)
    }

    pub(super) fn field(&mut self) -> PResult<Field> {
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

    pub(super) fn enum_decl(&mut self, annotations: Vec<Annotation>, start: Span) -> PResult<Decl> {
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

    pub(super) fn name_list(&mut self, annotations: Vec<Annotation>, start: Span) -> PResult<Decl> {
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
    pub(super) fn extern_is_object(&self) -> bool {
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

    pub(super) fn extern_decl(
        &mut self,
        annotations: Vec<Annotation>,
        start: Span,
    ) -> PResult<Decl> {
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

    pub(super) fn extern_members(&mut self, name: &Ident) -> PResult<Vec<ExternMember>> {
        let (members, _) = self.braced(|p| {
            let mstart = p.peek().span;
            let annotations = p.annotations()?;
            if p.at_word(&name.name) && p.is_punct_at(1, "(") {
                let cname = p.ident_any("a constructor name")?;
                let params = p.params()?;
                p.expect_semi("the constructor declaration")?;
                return Ok(ExternMember::Constructor {
                    annotations,
                    name: cname,
                    params,
                    span: mstart.to(p.prev_span),
                });
            }
            let is_abstract = p.eat_word("abstract");
            Ok(ExternMember::Method(p.prototype(
                annotations,
                is_abstract,
                mstart,
            )?))
        })?;
        Ok(members)
    }

    /// `R name<T>(params);`
    pub(super) fn prototype(
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

    pub(super) fn params(&mut self) -> PResult<Vec<Param>> {
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
    pub(super) fn signature(
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

    /// A parser or control declaration from its keyword: the signature, with its type
    /// parameters in scope for `rest`.
    pub(super) fn block_decl(
        &mut self,
        annotations: Vec<Annotation>,
        start: Span,
        rest: fn(&mut Self, TypeDeclSignature, Span) -> PResult<Decl>,
    ) -> PResult<Decl> {
        self.bump(); // `parser` or `control`
        let sig = self.signature(annotations, start)?;
        self.types.insert(sig.name.name.clone());
        let r = rest(self, sig, start);
        self.pop_type_scope();
        r
    }

    /// What follows a parser's or control's signature: `;` for a type declaration (`None`),
    /// or constructor parameters and a `{ ... }` body whose elements `element` parses one at
    /// a time, given each element's annotations and start. After an error it skips to the
    /// next element, so one bad local does not hide the next.
    pub(super) fn block_body(
        &mut self,
        mut element: impl FnMut(&mut Self, Vec<Annotation>, Span) -> PResult<()>,
    ) -> PResult<Option<Vec<Param>>> {
        if self.eat(";") {
            return Ok(None);
        }
        let ctor_params = if self.at("(") {
            self.params()?
        } else {
            Vec::new()
        };
        self.braced(|p| {
            let start = p.peek().span;
            let annotations = p.annotations()?;
            element(p, annotations, start)
        })?;
        Ok(Some(ctor_params))
    }
}
