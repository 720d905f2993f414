//! Top-level declarations in source order, their annotations, and the
//! v1model version a program picks.

use super::signatures::{names, param_names};
use super::{Checker, Sym, codes, expr, fold};
use crate::diag::Span;
use crate::front::ast;
use crate::ir::{self, Ty};

impl Checker {
    /// Structured annotations (`@name[...]`, P4_16 §18.2): a name is used
    /// once per element, and not also as an unstructured annotation there
    /// (p4c: "duplicate name for structured annotation"); their values are
    /// not lists (p4c's structured-annotation-e1..e3) but compile-time
    /// known values of type string, int or bool (a bit string too, as p4c
    /// folds it to a constant). `type_params` are the element's own (in
    /// scope for its annotations, as in p4c's `type-in-expr`).
    pub(super) fn structured_annotations(
        &mut self,
        anns: &[ast::Annotation],
        type_params: &[ast::Ident],
    ) {
        for (i, a) in anns.iter().enumerate() {
            let ast::AnnotationBody::Structured { exprs, kvs, .. } = &a.body else {
                continue;
            };
            if anns.iter().enumerate().any(|(j, o)| {
                j != i
                    && o.name.name == a.name.name
                    && (j < i || !matches!(o.body, ast::AnnotationBody::Structured { .. }))
            }) {
                self.error_label(
                    codes::DUPLICATE,
                    a.span,
                    format!(
                        "structured annotation `@{}` is given more than once here",
                        a.name.name
                    ),
                    "same name again",
                );
            }
            let values = exprs.iter().chain(kvs.iter().map(|kv| &kv.value));
            for e in values {
                if matches!(
                    e.kind,
                    ast::ExprKind::List(_) | ast::ExprKind::StructInit(_)
                ) {
                    self.error_label(
                        codes::NOT_CONSTANT,
                        e.span,
                        "a structured annotation holds literals and names, not lists",
                        "a list",
                    );
                } else if type_params.is_empty() {
                    self.annotation_value(e);
                } else {
                    self.discarding_changes(|c| {
                        c.push_scope();
                        c.declare_opaque_types(type_params);
                        c.annotation_value(e);
                        c.pop_scope();
                    });
                }
            }
        }
    }

    /// Structured annotations of the elements a top-level declaration holds
    /// outside any block body: fields, enum members, parameters, extern
    /// constructors and methods (P4_16 §18.2 applies to every element, as
    /// p4c checks them). A block's locals, tables and states are checked
    /// in the block's scope ([`Self::local_structured_annotations`]).
    fn inner_structured_annotations(&mut self, d: &ast::Decl, type_params: &[ast::Ident]) {
        match d {
            ast::Decl::Header(s) | ast::Decl::HeaderUnion(s) | ast::Decl::Struct(s) => {
                for f in &s.fields {
                    self.structured_annotations(&f.annotations, type_params);
                }
            }
            ast::Decl::Enum(e) => {
                for m in &e.members {
                    self.structured_annotations(&m.annotations, type_params);
                }
            }
            ast::Decl::Extern(e) => {
                for m in &e.members {
                    match m {
                        ast::ExternMember::Constructor {
                            annotations,
                            params,
                            ..
                        } => {
                            self.structured_annotations(annotations, type_params);
                            self.param_structured_annotations(params, type_params);
                        }
                        ast::ExternMember::Method(f) => {
                            let in_scope: Vec<ast::Ident> =
                                type_params.iter().chain(&f.type_params).cloned().collect();
                            self.structured_annotations(&f.annotations, &in_scope);
                            self.param_structured_annotations(&f.params, &in_scope);
                        }
                    }
                }
            }
            ast::Decl::ExternFunction(f) => {
                self.param_structured_annotations(&f.params, type_params)
            }
            ast::Decl::Function(f) => self.param_structured_annotations(&f.params, type_params),
            ast::Decl::Action(a) => self.param_structured_annotations(&a.params, type_params),
            ast::Decl::ParserType(s) | ast::Decl::ControlType(s) | ast::Decl::Package(s) => {
                self.param_structured_annotations(&s.params, type_params);
            }
            ast::Decl::Parser(p) => {
                self.param_structured_annotations(&p.signature.params, type_params);
                self.param_structured_annotations(&p.ctor_params, type_params);
            }
            ast::Decl::Control(c) => {
                self.param_structured_annotations(&c.signature.params, type_params);
                self.param_structured_annotations(&c.ctor_params, type_params);
            }
            _ => {}
        }
    }

    fn param_structured_annotations(&mut self, params: &[ast::Param], type_params: &[ast::Ident]) {
        for p in params {
            self.structured_annotations(&p.annotations, type_params);
        }
    }

    /// Structured annotations of a declaration inside a parser or control
    /// and of its elements (an action's parameters; a table's properties,
    /// keys, action references and entries), checked in the block's scope
    /// before the declaration, so the block's constants declared before
    /// it may be named there (the block's type parameters are in scope).
    pub(super) fn local_structured_annotations(&mut self, d: &ast::Decl) {
        self.structured_annotations(d.annotations(), &[]);
        match d {
            ast::Decl::Action(a) => self.param_structured_annotations(&a.params, &[]),
            ast::Decl::Function(f) => {
                self.param_structured_annotations(&f.params, &f.type_params);
            }
            ast::Decl::Table(t) => {
                for p in &t.properties {
                    self.structured_annotations(&p.annotations, &[]);
                    match &p.kind {
                        ast::TablePropertyKind::Key(keys) => {
                            for k in keys {
                                self.structured_annotations(&k.annotations, &[]);
                            }
                        }
                        ast::TablePropertyKind::Actions(refs) => {
                            for r in refs {
                                self.structured_annotations(&r.annotations, &[]);
                            }
                        }
                        ast::TablePropertyKind::Entries(entries) => {
                            for e in entries {
                                self.structured_annotations(&e.annotations, &[]);
                                self.structured_annotations(&e.action.annotations, &[]);
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }

    /// One value of a structured annotation: a compile-time known string,
    /// integer or boolean (P4_16 §18.2; p4c: "structured annotation must
    /// be compile-time constant values").
    fn annotation_value(&mut self, e: &ast::Expr) {
        let constant = match self.expr_any(e) {
            None => return,
            Some(expr::TE::Inf(_)) => true,
            Some(expr::TE::Typed(x)) => {
                matches!(x.ty, Ty::Str | Ty::Bool | Ty::Bit(_) | Ty::Int(_))
                    && matches!(
                        x.kind,
                        ir::ExprKind::Int(_) | ir::ExprKind::WideInt(_) | ir::ExprKind::Bool(_)
                    )
            }
        };
        if !constant {
            self.error_label(
                codes::NOT_CONSTANT,
                e.span,
                "a structured annotation's values are compile-time known strings, integers or \
                 booleans",
                "not a compile-time constant",
            );
        }
    }

    /// `@p4runtime_translation(uri, T)` on a `type`: p4c's grammar takes a
    /// string URI and, as the controller's type, `bit<W>` with a literal
    /// width, `string` or a literal width alone (issue2283); anything else
    /// (`bool`, `int<32>`, `bit<5+3>`) gives no P4Info translation.
    fn p4rt_translation(&mut self, a: &ast::Annotation) {
        let ast::AnnotationBody::Unstructured { raw, .. } = &a.body else {
            self.p4rt_translation_error(a.span);
            return;
        };
        let raw = raw.trim();
        let rest = raw
            .strip_prefix('"')
            .and_then(|r| r.find('"').map(|i| &r[i + 1..]))
            .and_then(|r| r.trim_start().strip_prefix(','));
        let Some(ty) = rest.map(str::trim) else {
            self.p4rt_translation_error(a.span);
            return;
        };
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let bit_w = ty
            .strip_prefix("bit")
            .map(str::trim_start)
            .and_then(|r| r.strip_prefix('<'))
            .and_then(|r| r.strip_suffix('>'))
            .is_some_and(|w| digits(w.trim()));
        if !(bit_w || ty == "string" || digits(ty)) {
            self.p4rt_translation_error(a.span);
        }
    }

    fn p4rt_translation_error(&mut self, span: Span) {
        self.error_label(
            codes::TYPE_MISMATCH,
            span,
            "`@p4runtime_translation` takes a URI string and the controller's type: `bit<W>` with a literal W, or `string`",
            "not a controller type p4c accepts",
        );
    }

    pub(super) fn top_decl(&mut self, d: &ast::Decl) {
        let type_params: &[ast::Ident] = match d {
            ast::Decl::Parser(p) => &p.signature.type_params,
            ast::Decl::Control(c) => &c.signature.type_params,
            ast::Decl::ParserType(t) | ast::Decl::ControlType(t) | ast::Decl::Package(t) => {
                &t.type_params
            }
            ast::Decl::Function(f) => &f.type_params,
            ast::Decl::ExternFunction(f) => &f.type_params,
            ast::Decl::Extern(e) => &e.type_params,
            ast::Decl::Header(s) | ast::Decl::HeaderUnion(s) | ast::Decl::Struct(s) => {
                &s.type_params
            }
            _ => &[],
        };
        self.structured_annotations(d.annotations(), type_params);
        self.inner_structured_annotations(d, type_params);
        match d {
            ast::Decl::Const(c) => {
                if let Some(value) = self.const_decl(c) {
                    self.prog.constants.push(ir::Constant {
                        name: c.name.name.clone(),
                        value,
                        span: c.span,
                    });
                }
            }
            ast::Decl::Typedef(t) => {
                if let Some(a) = ast::find_annotation(&t.annotations, "p4runtime_translation") {
                    self.p4rt_translation(a);
                }
                if let Some(ty) = self.ty(&t.ty) {
                    if t.is_new_type && !matches!(ty, Ty::Bool | Ty::Bit(_) | Ty::Int(_)) {
                        // P4_16 §7.6: `type` introduces a new name for a
                        // base type (p4c's typedef-and-type-definitions:
                        // "'type' can only be applied to base types").
                        self.error_label(
                            codes::TYPE_MISMATCH,
                            t.ty.span,
                            format!(
                                "`type` applies to bool, bit<W> and int<W> (or a type over one), not {}",
                                self.ty_name(&ty)
                            ),
                            "not a base type",
                        );
                    }
                    self.declare(&t.name, Sym::Type(ty));
                    let nominal = if t.is_new_type {
                        Some(t.name.name.clone())
                    } else {
                        self.nominal_of_type(&t.ty)
                    };
                    if let Some(n) = nominal {
                        self.nominal_types.insert(t.name.name.clone(), n);
                    }
                }
            }
            ast::Decl::Header(s) | ast::Decl::HeaderUnion(s) | ast::Decl::Struct(s) => {
                // A generic type's type parameters share one scope (P4_16
                // §6.5, as a function's do; p4c's
                // name-duplicate-type-parameter-names-2: `struct S<T, T>`).
                self.unique_param_names(&[names(&s.type_params)], false);
                let kind = match d {
                    ast::Decl::Header(_) => ir::CompositeKind::Header,
                    ast::Decl::HeaderUnion(_) => ir::CompositeKind::Union,
                    _ => ir::CompositeKind::Struct,
                };
                self.struct_like(s, kind);
            }
            ast::Decl::Enum(e) => self.enum_decl(e),
            ast::Decl::Error(l) => {
                for m in &l.members {
                    if self.prog.errors.contains(&m.name) {
                        self.error(
                            codes::DUPLICATE,
                            m.span,
                            format!("error `{}` declared twice", m.name),
                        );
                    } else {
                        self.prog.errors.push(m.name.clone());
                    }
                }
            }
            ast::Decl::MatchKind(l) => {
                // Match kinds are names of the top-level scope (P4_16 §7.1.3):
                // one declared twice is a duplicate declaration.
                for m in &l.members {
                    if self.match_kinds.contains(&m.name) {
                        self.error(
                            codes::DUPLICATE,
                            m.span,
                            format!("match kind `{}` declared twice", m.name),
                        );
                    } else {
                        self.match_kinds.push(m.name.clone());
                        if let Some(h) = self.match_kind_enum {
                            let i = self.prog.enums[h].members.len() as u128;
                            self.prog.enums[h].members.push((m.name.clone(), i));
                        }
                    }
                }
            }
            ast::Decl::Extern(e) => {
                let n = e.name.clone();
                self.declare(&n, Sym::ExternDecl(e.name.name.clone()));
                self.unique_param_names(&[names(&e.type_params)], false);
                if !e
                    .members
                    .iter()
                    .any(|m| matches!(m, ast::ExternMember::Constructor { .. }))
                {
                    self.ctorless_externs.insert(e.name.name.clone());
                }
                for m in &e.members {
                    match m {
                        ast::ExternMember::Constructor { params, .. } => {
                            self.check_param_types(params, None, &[&e.type_params]);
                        }
                        ast::ExternMember::Method(f) => {
                            // A method's type parameter may not reuse a name
                            // its extern's type parameters hold (p4c's
                            // generic_e: `void f<D>(in D d)` inside `X<D>`).
                            for t in &f.type_params {
                                if e.type_params.iter().any(|x| x.name == t.name) {
                                    self.error_label(
                                        codes::DUPLICATE,
                                        t.span,
                                        format!(
                                            "type parameter `{}` of method `{}` shadows the one \
                                             of extern `{}`",
                                            t.name, f.name.name, e.name.name
                                        ),
                                        "already a type parameter of the extern",
                                    );
                                }
                            }
                            self.method_return_type(f);
                            self.check_param_types(
                                &f.params,
                                Some(&f.return_type),
                                &[&e.type_params, &f.type_params],
                            )
                        }
                    }
                }
                self.check_overloads(e);
                self.no_self_reference(e);
                self.no_method_named_like_extern(e);
                if crate::v1model::object(&e.name.name).is_none() {
                    self.user_extern_decl(e);
                }
            }
            ast::Decl::ExternFunction(f) => {
                let n = f.name.clone();
                self.declare(&n, Sym::ExternDecl(f.name.name.clone()));
                self.method_return_type(f);
                self.check_param_types(&f.params, Some(&f.return_type), &[&f.type_params]);
                self.unique_param_names(&[names(&f.type_params), param_names(&f.params)], false);
                // A function named like one of v1model's is the program's
                // own overload when v1model has none of its arity (P4_16
                // overloads functions by their number of parameters, as
                // p4c does: its `random(bit<5> logRange)` beside
                // v1model's); one of v1model's arity is v1model's.
                if !crate::v1model::functions(&f.name.name)
                    .any(|s| s.params.len() == f.params.len())
                {
                    self.extern_function_overload(f);
                    self.user_function_decl(f);
                }
            }
            ast::Decl::ParserType(s) | ast::Decl::ControlType(s) | ast::Decl::Package(s) => {
                match d {
                    ast::Decl::ParserType(_) => self.parser_type_names.insert(s.name.name.clone()),
                    ast::Decl::ControlType(_) => {
                        self.control_type_names.insert(s.name.name.clone())
                    }
                    _ => false,
                };
                self.block_sigs.insert(s.name.name.clone(), s.clone());
                self.unique_param_names(&[names(&s.type_params), param_names(&s.params)], false);
                self.declare(&s.name, Sym::BlockType);
                self.check_param_types(&s.params, None, &[&s.type_params]);
            }
            ast::Decl::Parser(p) => {
                self.block_param_names(&p.signature, &p.ctor_params);
                self.no_block_ctor_params(&p.ctor_params, true);
                self.parser_type_names.insert(p.signature.name.name.clone());
                self.block_sigs
                    .insert(p.signature.name.name.clone(), p.signature.clone());
                self.parser_decl(p)
            }
            ast::Decl::Control(c) => {
                self.block_param_names(&c.signature, &c.ctor_params);
                self.no_block_ctor_params(&c.ctor_params, false);
                self.control_type_names
                    .insert(c.signature.name.name.clone());
                self.block_sigs
                    .insert(c.signature.name.name.clone(), c.signature.clone());
                self.control_decl(c)
            }
            ast::Decl::Action(a) => {
                if let Some(h) = self.action_decl(a, None) {
                    self.declare(&a.name, Sym::Action(h));
                }
            }
            ast::Decl::Function(f) => self.function_decl(f),
            ast::Decl::Instantiation(i) => self.main_decl(i),
            // The P4_16 grammar has no variable among its top-level
            // declarations (p4c's globalVar_e).
            ast::Decl::Var(v) => self.error(
                codes::NOT_ALLOWED_HERE,
                v.span,
                "variables may only be declared in parsers, controls, actions and functions",
            ),
            ast::Decl::ValueSet(v) => self.error(
                codes::NOT_ALLOWED_HERE,
                v.span,
                "value sets may only be declared in parsers",
            ),
            ast::Decl::Table(t) => self.error(
                codes::NOT_ALLOWED_HERE,
                t.span,
                "tables may only be declared in controls",
            ),
        }
    }

    /// `#define V1MODEL_VERSION` before including v1model.p4 picks the
    /// version of its declarations; p4c refuses a version it does not know
    /// (issue5296: "unknown v1model version; initial supported version is
    /// 20180101, latest is 20200408").
    pub(super) fn check_v1model_version(&mut self, e: &ir::Expr, span: crate::diag::Span) {
        let (first, latest) = crate::v1model::VERSIONS;
        match fold::const_int(e) {
            Some(v) if (first..=latest).contains(&v) => self.v1model_version = v,
            Some(v) => self.error_label(
                codes::OVERFLOW,
                span,
                format!(
                    "unknown v1model version {v}; the first supported version is {first}, the latest {latest}"
                ),
                "set by `#define V1MODEL_VERSION` before `#include <v1model.p4>`",
            ),
            None => self.error(
                codes::NOT_CONSTANT,
                span,
                "the v1model version must be a non-negative number",
            ),
        }
    }
}
