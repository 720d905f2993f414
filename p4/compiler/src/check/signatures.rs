//! Signatures of externs, functions, block types and packages: parameter
//! types and names, directions, overloads and declared type names.

use super::{Checker, Sym, codes};
use crate::front::ast;
use crate::ir::Ty;

impl Checker {
    /// An extern method or function returns a value of a type a target can
    /// hold: never `int`, whose values exist only at compile time (p4c's
    /// issue3273: "illegal return type for method").
    pub(super) fn method_return_type(&mut self, f: &ast::FunctionPrototype) {
        if matches!(f.return_type.kind, ast::TypeKind::Int) {
            self.error_label(
                codes::TYPE_MISMATCH,
                f.return_type.span,
                format!(
                    "`{}` cannot return `int`: an infinite-precision integer exists only at compile time",
                    f.name.name
                ),
                "give it a width",
            );
        }
    }

    /// Reports unknown type names in the signature of a declaration that
    /// is otherwise only recorded (an extern, a parser/control/package
    /// type): p4c resolves every name where it is declared, used or not.
    pub(super) fn check_param_types(
        &mut self,
        params: &[ast::Param],
        ret: Option<&ast::Type>,
        generic: &[&[ast::Ident]],
    ) {
        for t in ret.into_iter().chain(params.iter().map(|p| &p.ty)) {
            self.check_type_names(t, generic);
        }
        // `void` is only a whole return type: not a parameter's type, nor
        // part of one (p4c's extern-abstract-method-return-type-has-dont-care,
        // `abstract tuple<_, void> f(..)`); checked here on signatures that
        // may never be called.
        let parts = ret.into_iter().flat_map(type_arguments);
        for t in parts.chain(params.iter().map(|p| &p.ty)) {
            if let Some(v) = find_void(t) {
                self.error_label(
                    codes::TYPE_MISMATCH,
                    v.span,
                    "`void` is only the return type of a function returning nothing",
                    "not a type of values",
                );
            }
        }
        self.check_param_defaults(params);
        self.directionless_object_params(params);
        self.string_params(params);
        self.no_block_declaration_types(params);
    }

    /// A member named after its extern is a constructor (P4_16 §7.2.12.2),
    /// which has no return type and is not abstract: `extern X { void X(); }`
    /// is refused rather than read as a method `X` (p4c's constructor_e,
    /// "Constructor ... has a return type").
    pub(super) fn no_method_named_like_extern(&mut self, e: &ast::ExternDecl) {
        for m in &e.members {
            if let ast::ExternMember::Method(f) = m
                && f.name.name == e.name.name
            {
                self.error_label(
                    codes::WRONG_KIND,
                    f.name.span,
                    format!(
                        "`{}` is named after its extern, so it is a constructor: a constructor \
                         has no return type and is not abstract",
                        f.name.name
                    ),
                    "a constructor declared as a method",
                );
            }
        }
    }

    /// An extern whose constructor or method takes or returns the extern
    /// itself (`extern E { void m(E e); }`) would be a self-referencing
    /// type; p4c refuses it ("Self-referencing types not supported",
    /// issue2544_self_ref), and so do we, on the declaration.
    pub(super) fn no_self_reference(&mut self, e: &ast::ExternDecl) {
        let names_self = |t: &ast::Type| {
            matches!(&t.kind, ast::TypeKind::Named { name, .. }
                if !name.top_level && name.ident.name == e.name.name)
        };
        for m in &e.members {
            let (params, ret) = match m {
                ast::ExternMember::Constructor { params, .. } => (params, None),
                ast::ExternMember::Method(f) => (&f.params, Some(&f.return_type)),
            };
            for t in params.iter().map(|p| &p.ty).chain(ret) {
                if names_self(t) {
                    self.error_label(
                        codes::UNSUPPORTED,
                        t.span,
                        format!(
                            "not supported yet: extern `{}` referring to itself in its own methods",
                            e.name.name
                        ),
                        "self-referencing type",
                    );
                }
            }
        }
    }

    /// A parameter of an extern, parser, control or package type is an
    /// object, passed as a reference: it has no direction (P4_16 §6.8,
    /// p4c's issue3787: "a parameter with type Y cannot have a direction").
    /// Checked on signatures that have no body to refuse the type in
    /// (extern functions and methods, block and package types).
    fn directionless_object_params(&mut self, params: &[ast::Param]) {
        for p in params {
            if matches!(p.direction, ast::Direction::None) {
                continue;
            }
            let ast::TypeKind::Named { name, .. } = &p.ty.kind else {
                continue;
            };
            let object = matches!(
                self.lookup(name),
                Some(
                    Sym::ExternDecl(_)
                        | Sym::BlockType
                        | Sym::Control(_)
                        | Sym::Parser(_)
                        | Sym::CtorControl(_)
                )
            );
            if object {
                self.error_label(
                    codes::TYPE_MISMATCH,
                    p.span,
                    format!(
                        "parameter `{}` of type `{}` cannot have a direction: it is an object",
                        p.name.name, name.ident.name
                    ),
                    "remove the direction",
                );
            }
        }
    }

    /// P4_16 §7.1.5: a string is only ever a compile-time argument, so a
    /// parameter of type `string` takes no direction (p4c: "a parameter
    /// with type string cannot have a direction"), and no tuple holds one
    /// (p4c lays a tuple out as a struct, whose field "cannot have type
    /// 'string'"). Checked on signatures, which may never be called.
    fn string_params(&mut self, params: &[ast::Param]) {
        for p in params {
            if !matches!(p.direction, ast::Direction::None) && self.names_string(&p.ty) {
                self.error_label(
                    codes::TYPE_MISMATCH,
                    p.span,
                    format!(
                        "parameter `{}` of type `string` cannot have a direction: strings are \
                         only compile-time arguments",
                        p.name.name
                    ),
                    "remove the direction",
                );
            }
            if let Some(t) = find_tuple_string(&p.ty, |t| self.names_string(t)) {
                self.error_label(
                    codes::TYPE_MISMATCH,
                    t.span,
                    "a tuple element cannot be a `string`: strings are only compile-time arguments",
                    "a string in a tuple",
                );
            }
        }
    }

    /// Whether `t` is `string`, or a typedef of it.
    fn names_string(&self, t: &ast::Type) -> bool {
        match &t.kind {
            ast::TypeKind::String => true,
            ast::TypeKind::Named { name, args } => {
                args.is_empty() && matches!(self.lookup(name), Some(Sym::Type(Ty::Str)))
            }
            _ => false,
        }
    }

    /// Reports each name in `t` that is neither declared nor one of the
    /// type parameters `generic`.
    pub(super) fn check_type_names(&mut self, t: &ast::Type, generic: &[&[ast::Ident]]) {
        use ast::TypeKind as K;
        match &t.kind {
            K::Named { name, args } => {
                for a in args {
                    self.check_type_names(a, generic);
                }
                let is_param = is_type_param(name, generic);
                if !is_param && self.lookup(name).is_none() {
                    self.error_label(
                        codes::UNKNOWN_NAME,
                        name.span,
                        format!("unknown type `{}`", name.ident.name),
                        "not declared",
                    );
                } else if !is_param
                    && args.is_empty()
                    && let Some(Sym::Generic(g)) = self.lookup(name).cloned()
                {
                    // p4c's issue3293: `extern t1 f();` for a generic `t1`.
                    self.error_label(
                        codes::ARG_COUNT,
                        name.span,
                        format!("`{g}` needs type arguments, e.g. `{g}<bit<8>>`"),
                        "generic type without type arguments",
                    );
                } else if !is_param
                    && matches!(self.lookup(name), Some(Sym::Generic(_)))
                    && !args.iter().any(|a| names_a_type_param(a, generic))
                {
                    // A specialization is checked where it is written, used
                    // or not (p4c's type-list-of-illformed-type: a header
                    // union `S<T>` given `bit<32>` in an extern's signature).
                    self.ty(t);
                }
            }
            K::Stack { elem, .. } | K::List(elem) => self.check_type_names(elem, generic),
            K::Tuple(items) => {
                for i in items {
                    self.check_type_names(i, generic);
                }
            }
            _ => {}
        }
    }

    /// Reports a name given twice among `groups` (type parameters, then
    /// parameter lists): they share one scope (P4_16 §6.5; p4c's dup-param
    /// and decl-*-with-duplicate-parameter-names tests). With `across_only`
    /// a repeat inside one group is left to the scope it is declared in.
    pub(super) fn unique_param_names(&mut self, groups: &[Vec<&ast::Ident>], across_only: bool) {
        let mut seen: Vec<(&str, usize)> = Vec::new();
        for (g, group) in groups.iter().enumerate() {
            for id in group {
                let dup = seen
                    .iter()
                    .any(|(n, k)| *n == id.name && (!across_only || *k != g));
                if dup {
                    self.error_label(
                        codes::DUPLICATE,
                        id.span,
                        format!("`{}` names two parameters of one declaration", id.name),
                        "second declaration",
                    );
                } else {
                    seen.push((id.name.as_str(), g));
                }
            }
        }
    }

    /// A parser's or control's type parameters, parameters and constructor
    /// parameters are one scope; repeats within the parameters are reported
    /// when they are declared.
    pub(super) fn block_param_names(&mut self, sig: &ast::TypeDeclSignature, ctor: &[ast::Param]) {
        let groups = [
            names(&sig.type_params),
            param_names(&sig.params),
            param_names(ctor),
        ];
        self.unique_param_names(&groups, true);
        self.check_param_defaults(&sig.params);
        self.check_param_defaults(ctor);
        self.no_block_declaration_types(&sig.params);
        self.no_block_declaration_types(ctor);
    }

    /// A parameter's type is a type: a parser or control *declaration*
    /// (one with a body) is not one, its type is declared apart, without a
    /// body (`control X(); control C()(X x)`; p4c's spec-issue563:
    /// "parameter cannot have type control A").
    fn no_block_declaration_types(&mut self, params: &[ast::Param]) {
        for p in params {
            let ast::TypeKind::Named { name, .. } = &p.ty.kind else {
                continue;
            };
            let kind = match self.lookup(name) {
                Some(Sym::Control(_) | Sym::CtorControl(_)) => "control",
                Some(Sym::Parser(_) | Sym::CtorParser(_)) => "parser",
                _ => continue,
            };
            self.error_label(
                codes::WRONG_KIND,
                p.ty.span,
                format!(
                    "parameter `{}` cannot have the type of {kind} `{}`: declare a {kind} type without a body and use that",
                    p.name.name, name.ident.name
                ),
                format!("a {kind} declaration, not a type"),
            );
        }
    }

    /// A control's constructor parameters may not be parsers, nor a
    /// parser's controls: a constructor parameter is instantiated in the
    /// block, and P4_16's rules of where objects may be instantiated let
    /// parsers hold parser instances only and controls control instances
    /// only (p4c's issue1331: "instantiation of parser in control").
    pub(super) fn no_block_ctor_params(&mut self, ctor: &[ast::Param], in_parser: bool) {
        for p in ctor {
            let ast::TypeKind::Named { name, .. } = &p.ty.kind else {
                continue;
            };
            let (wrong, what, block) = if in_parser {
                (&self.control_type_names, "control", "parser")
            } else {
                (&self.parser_type_names, "parser", "control")
            };
            if wrong.contains(&name.ident.name) {
                self.error_label(
                    codes::NOT_ALLOWED_HERE,
                    p.name.span,
                    format!("`{}`: instantiation of a {what} in a {block}", p.name.name),
                    format!("a {what} cannot be a {block}'s constructor parameter"),
                );
            }
        }
    }

    /// Methods (and constructors) of extern `e` overload by their number of
    /// parameters or by their parameter names (P4_16 §7.2.12; p4c's
    /// issue5253_legal_overloads): two of one name with the same number of
    /// parameters and the same names could not be told apart by any call.
    pub(super) fn check_overloads(&mut self, e: &ast::ExternDecl) {
        let mut seen: Vec<(&str, Vec<&str>)> = Vec::new();
        for m in &e.members {
            let (name, params) = match m {
                ast::ExternMember::Constructor { name, params, .. } => {
                    self.unique_param_names(&[param_names(params)], false);
                    (name, params)
                }
                ast::ExternMember::Method(f) => {
                    let groups = [names(&f.type_params), param_names(&f.params)];
                    self.unique_param_names(&groups, false);
                    (&f.name, &f.params)
                }
            };
            let ps: Vec<&str> = params.iter().map(|p| p.name.name.as_str()).collect();
            let same = |(m, qs): &(&str, Vec<&str>)| {
                *m == name.name && qs.len() == ps.len() && ps.iter().all(|p| qs.contains(p))
            };
            if seen.iter().any(same) {
                self.error_label(
                    codes::DUPLICATE,
                    name.span,
                    format!(
                        "extern `{}` declares `{}({})` twice: methods of one name must differ in \
                         their number of parameters or in their parameter names, so that a call \
                         can choose",
                        e.name.name,
                        name.name,
                        ps.join(", ")
                    ),
                    "ambiguous",
                );
            } else {
                seen.push((name.name.as_str(), ps));
            }
        }
    }
}

pub(super) fn names(ids: &[ast::Ident]) -> Vec<&ast::Ident> {
    ids.iter().collect()
}

pub(super) fn param_names(ps: &[ast::Param]) -> Vec<&ast::Ident> {
    ps.iter().map(|p| &p.name).collect()
}

/// The types written inside `t`: its type arguments, tuple elements or
/// stack element.
fn type_arguments(t: &ast::Type) -> Vec<&ast::Type> {
    match &t.kind {
        ast::TypeKind::Named { args, .. } => args.iter().collect(),
        ast::TypeKind::Tuple(items) => items.iter().collect(),
        ast::TypeKind::Stack { elem, .. } => vec![&**elem],
        _ => Vec::new(),
    }
}

/// The first element of a tuple type within `t` (at any depth) that
/// `is_string` calls a string.
fn find_tuple_string(
    t: &ast::Type,
    is_string: impl Fn(&ast::Type) -> bool + Copy,
) -> Option<&ast::Type> {
    use ast::TypeKind as K;
    match &t.kind {
        K::Tuple(items) => items
            .iter()
            .find(|i| is_string(i))
            .or_else(|| items.iter().find_map(|i| find_tuple_string(i, is_string))),
        K::Named { args, .. } => args.iter().find_map(|a| find_tuple_string(a, is_string)),
        K::Stack { elem, .. } => find_tuple_string(elem, is_string),
        K::List(elem) => find_tuple_string(elem, is_string),
        _ => None,
    }
}

/// `t` itself if it is `void`, else the first `void` written inside it.
fn find_void(t: &ast::Type) -> Option<&ast::Type> {
    if matches!(t.kind, ast::TypeKind::Void) {
        return Some(t);
    }
    type_arguments(t).into_iter().find_map(find_void)
}

/// Whether `name` is one of the type parameters in scope (`generic`).
fn is_type_param(name: &ast::PathName, generic: &[&[ast::Ident]]) -> bool {
    !name.top_level
        && generic
            .iter()
            .any(|ps| ps.iter().any(|p| p.name == name.ident.name))
}

/// Whether `t` names one of the type parameters in scope (`generic`).
fn names_a_type_param(t: &ast::Type, generic: &[&[ast::Ident]]) -> bool {
    match &t.kind {
        ast::TypeKind::Named { name, args } => {
            is_type_param(name, generic) || args.iter().any(|a| names_a_type_param(a, generic))
        }
        ast::TypeKind::Stack { elem, .. } | ast::TypeKind::List(elem) => {
            names_a_type_param(elem, generic)
        }
        ast::TypeKind::Tuple(items) => items.iter().any(|i| names_a_type_param(i, generic)),
        _ => false,
    }
}
