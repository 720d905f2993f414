//! Control declarations and what a parser or control body declares: locals, value sets,
//! instantiations and actions (P4_16 §14).

use crate::diag::{Diagnostic, Span, codes};
use crate::front::ast::*;
use crate::front::lexer::Tok;

use super::{BUILTIN_TYPES, PResult, Parser, RESERVED};

impl Parser<'_> {
    /// `control Name<..>(..)`, then `;` (a control type) or a control with its locals and `apply`.
    pub(super) fn control_decl(
        &mut self,
        annotations: Vec<Annotation>,
        start: Span,
    ) -> PResult<Decl> {
        self.block_decl(annotations, start, Self::control_rest)
    }

    fn control_rest(&mut self, sig: TypeDeclSignature, start: Span) -> PResult<Decl> {
        let mut locals = Vec::new();
        let mut apply = None;
        let body = self.block_body(|p, annotations, lstart| {
            if p.at_word("apply") && p.is_punct_at(1, "{") {
                p.bump();
                let mut b = p.block()?;
                b.annotations = annotations;
                if apply.is_some() {
                    p.push(
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
            locals.push(p.local_decl(annotations, lstart, true)?);
            Ok(())
        })?;
        let Some(ctor_params) = body else {
            return Ok(Decl::ControlType(TypeDeclSignature {
                span: start.to(self.prev_span),
                ..sig
            }));
        };
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
    pub(super) fn local_decl(
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

    pub(super) fn value_set(&mut self, annotations: Vec<Annotation>, start: Span) -> PResult<Decl> {
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
    pub(super) fn type_led_decl(
        &mut self,
        annotations: Vec<Annotation>,
        start: Span,
    ) -> PResult<Decl> {
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
    pub(super) fn instantiation_rest(
        &mut self,
        annotations: Vec<Annotation>,
        ty: Type,
        start: Span,
    ) -> PResult<Instantiation> {
        let args = self.args()?;
        let name = self.name("an instance name")?;
        self.declare_value(&name);
        let initializer = if self.eat("=") {
            let (decls, _) = self.braced(|p| {
                let dstart = p.peek().span;
                let annotations = p.annotations()?;
                p.type_led_decl(annotations, dstart)
            })?;
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

    pub(super) fn action_decl(
        &mut self,
        annotations: Vec<Annotation>,
        start: Span,
    ) -> PResult<ActionDecl> {
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
}
