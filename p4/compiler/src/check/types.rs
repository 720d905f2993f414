//! Types: AST types to IR types and their names, headers, unions, structs
//! and enums, and instances of generic structs (P4_16 spec §7).

use super::{Checker, MAX_VARBIT_WIDTH, Sym, codes, expr, fold};
use crate::diag::Span;
use crate::front::ast;
use crate::ir::{self, Handle, Ty};

impl Checker {
    /// Resolves a type. `None` after reporting an error.
    pub(crate) fn ty(&mut self, t: &ast::Type) -> Option<Ty> {
        use ast::TypeKind as K;
        Some(match &t.kind {
            K::Bool => Ty::Bool,
            K::Error => Ty::Error,
            K::String => Ty::Str,
            K::Void => Ty::Void,
            K::Bit(w) => Ty::Bit(self.width(w)?),
            K::SignedInt(w) => Ty::Int(self.width(w)?),
            K::Varbit(w) => {
                let w_bits = self.const_u32(w, "varbit width")?;
                if w_bits == 0 || w_bits > MAX_VARBIT_WIDTH {
                    self.error_label(
                        codes::BAD_WIDTH,
                        w.span,
                        format!(
                            "varbit width {w_bits} is not supported: at most {MAX_VARBIT_WIDTH} \
                             bits (a 9216-byte jumbo frame)"
                        ),
                        "this width",
                    );
                    return None;
                }
                Ty::Varbit(w_bits)
            }
            K::Int => {
                self.error(
                    codes::UNSUPPORTED,
                    t.span,
                    "`int` (infinite precision) is only allowed for constants",
                );
                return None;
            }
            K::MatchKind => Ty::Enum(self.match_kind_enum(t.span)),
            K::List(_) => {
                // A list's length is its value's (P4_16 §7.2.10); a list
                // expression cast to one is a tuple of that many elements
                // (`Checker::list_cast`), so is a local or constant declared
                // with one (`Checker::list_decl`), a function's parameter
                // takes its argument's (`Checker::list_args_of_call`), and
                // a user extern's constructor takes one
                // (`Checker::user_params`), but no other value has this
                // type.
                self.unsupported(
                    t.span,
                    "`list<..>` types other than in a cast of a list expression, `(list<T>){..}`, \
                     a local or constant with an initialiser, a function's parameter or an extern \
                     constructor's parameter",
                );
                return None;
            }
            K::Named { name, args } => match self.lookup(name).cloned() {
                Some(Sym::Type(ty)) => {
                    if !args.is_empty() {
                        self.error(
                            codes::ARG_COUNT,
                            t.span,
                            format!("`{}` takes no type arguments", name.ident.name),
                        );
                        return None;
                    }
                    ty
                }
                Some(Sym::Generic(g)) => {
                    if args.is_empty() {
                        self.error(
                            codes::ARG_COUNT,
                            t.span,
                            format!("`{g}` needs type arguments, e.g. `{g}<bit<8>>`"),
                        );
                        return None;
                    }
                    return self.instantiate_generic(&g, args, t.span);
                }
                Some(Sym::ExternDecl(e))
                    if e != "packet_in"
                        && e != "packet_out"
                        && (crate::v1model::object(&e).is_some()
                            || self.is_user_extern_type(&e)) =>
                {
                    // An extern object type names no values: its instances
                    // are passed only to directionless block parameters
                    // (`check::extern_params`).
                    self.error_label(
                        codes::WRONG_KIND,
                        name.span,
                        format!(
                            "`{e}` is an extern object type, not a type of values: only a \
                             control's or parser's directionless parameter takes an instance of \
                             it"
                        ),
                        "an extern type",
                    );
                    return None;
                }
                Some(_) => {
                    self.error_label(
                        codes::WRONG_KIND,
                        name.span,
                        format!("`{}` is not a type", name.ident.name),
                        "expected a type",
                    );
                    return None;
                }
                None => {
                    self.error_label(
                        codes::UNKNOWN_NAME,
                        name.span,
                        format!("unknown type `{}`", name.ident.name),
                        "not declared",
                    );
                    return None;
                }
            },
            K::Stack { elem, size } => {
                let et = self.ty(elem)?;
                let n = self.const_u32(size, "stack size")?;
                match &et {
                    Ty::Composite(c)
                        if self.prog.composites[*c].kind != ir::CompositeKind::Struct => {}
                    _ => {
                        self.error(
                            codes::TYPE_MISMATCH,
                            elem.span,
                            "header stack elements must be headers or header unions",
                        );
                        return None;
                    }
                }
                if n == 0 {
                    self.error(
                        codes::BAD_WIDTH,
                        size.span,
                        "a header stack needs at least one element",
                    );
                    return None;
                }
                Ty::Stack(Box::new(et), n)
            }
            K::Tuple(items) => {
                let mut v = Vec::new();
                for i in items {
                    v.push(self.ty(i)?);
                }
                Ty::Tuple(v)
            }
            K::DontCare => {
                self.unsupported(t.span, "`_` as a type");
                return None;
            }
        })
    }

    pub(crate) fn ty_name(&self, t: &Ty) -> String {
        match t {
            Ty::Bool => "bool".into(),
            Ty::Bit(w) => format!("bit<{w}>"),
            Ty::Int(w) => format!("int<{w}>"),
            Ty::Varbit(w) => format!("varbit<{w}>"),
            Ty::Error => "error".into(),
            Ty::Enum(e) | Ty::SerEnum(e) => self.prog.enums[*e].name.clone(),
            Ty::Composite(c) => self.prog.composites[*c].name.clone(),
            Ty::Stack(e, n) => format!("{}[{n}]", self.ty_name(e)),
            Ty::Str => "string".into(),
            Ty::Tuple(v) => format!(
                "tuple<{}>",
                v.iter()
                    .map(|t| self.ty_name(t))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Ty::Void => "void".into(),
        }
    }

    pub(super) fn struct_like(&mut self, s: &ast::StructLikeDecl, kind: ir::CompositeKind) {
        // `@match(k)` on a field (a value set's struct, P4_16 §12.11.3)
        // names a match kind (p4c's issue1732: "value must be a match_kind").
        for f in &s.fields {
            if let Some(a) = ast::find_annotation(&f.annotations, "match") {
                let ok = match &a.body {
                    ast::AnnotationBody::Unstructured {
                        exprs: Some(exprs), ..
                    } => matches!(exprs.as_slice(), [e] if matches!(&e.kind,
                        ast::ExprKind::Name(p) if self.match_kinds.contains(&p.ident.name))),
                    _ => false,
                };
                if !ok {
                    self.error_label(
                        codes::BAD_MATCH_KIND,
                        a.span,
                        "`@match` takes the name of a match kind (`exact`, `ternary`, `lpm`...)",
                        "not a match kind",
                    );
                }
            }
        }
        if !s.type_params.is_empty() {
            // Generic: instantiated (monomorphised) at each use with type arguments.
            self.generics.insert(s.name.name.clone(), (s.clone(), kind));
            self.declare(&s.name, Sym::Generic(s.name.name.clone()));
            for f in &s.fields {
                self.check_type_names(&f.ty, &[&s.type_params]);
                // Whatever the type arguments, a tuple is neither a header
                // (a union's members) nor a header field's type.
                if kind != ir::CompositeKind::Struct && matches!(f.ty.kind, ast::TypeKind::Tuple(_))
                {
                    let what = if kind == ir::CompositeKind::Union {
                        "a header union's members must be headers"
                    } else {
                        "header fields must be bit strings or structs of them"
                    };
                    self.error_label(codes::TYPE_MISMATCH, f.ty.span, what, "a tuple");
                }
            }
            return;
        }
        if let Some(h) = self.composite(s, kind, s.name.name.clone()) {
            self.declare(&s.name, Sym::Type(Ty::Composite(h)));
        }
    }

    /// `S<args>` for a generic struct or header `S`.
    fn instantiate_generic(&mut self, name: &str, args: &[ast::Type], span: Span) -> Option<Ty> {
        let (decl, kind) = self.generics.get(name)?.clone();
        if args.len() != decl.type_params.len() {
            self.error_label(
                codes::ARG_COUNT,
                span,
                format!(
                    "`{name}` takes {} type argument(s), {} given",
                    decl.type_params.len(),
                    args.len()
                ),
                "wrong number of type arguments",
            );
            return None;
        }
        let mut tys = Vec::new();
        for a in args {
            tys.push(self.ty(a)?);
        }
        // A generic type may not be specialized with itself, however deep
        // (`h<h<bit>>`): p4c's "contains self as type argument" (issue3291),
        // the recursive types P4_16 has no values of.
        if let Some((a, _)) = args
            .iter()
            .zip(&tys)
            .find(|(_, t)| self.mentions_generic(t, name))
        {
            self.error_label(
                codes::TYPE_MISMATCH,
                a.span,
                format!("`{name}` cannot take an instance of itself as a type argument"),
                format!("an instance of `{name}`"),
            );
            return None;
        }
        let key = (name.to_string(), tys.clone());
        if let Some(t) = self.generic_cache.get(&key) {
            return Some(t.clone());
        }
        let full = format!(
            "{name}<{}>",
            tys.iter()
                .map(|t| self.ty_name(t))
                .collect::<Vec<_>>()
                .join(", ")
        );
        self.push_scope();
        for (p, t) in decl.type_params.iter().zip(&tys) {
            self.declare(p, Sym::Type(t.clone()));
        }
        let h = self.composite(&decl, kind, full);
        self.pop_scope();
        let ty = Ty::Composite(h?);
        self.generic_cache.insert(key, ty.clone());
        Some(ty)
    }

    /// Whether `t` is, or holds as a type argument, element or tuple item,
    /// an instance of generic struct or header `name`.
    fn mentions_generic(&self, t: &Ty, name: &str) -> bool {
        match t {
            Ty::Tuple(items) => items.iter().any(|i| self.mentions_generic(i, name)),
            Ty::Stack(e, _) => self.mentions_generic(e, name),
            Ty::Composite(_) => self.generic_cache.iter().any(|((n, args), v)| {
                v == t && (n == name || args.iter().any(|a| self.mentions_generic(a, name)))
            }),
            _ => false,
        }
    }

    /// Builds a header, union or struct type named `name`.
    fn composite(
        &mut self,
        s: &ast::StructLikeDecl,
        kind: ir::CompositeKind,
        name: String,
    ) -> Option<Handle<ir::Composite>> {
        let mut fields: Vec<ir::Field> = Vec::new();
        let mut field_nominals: Vec<(u32, String)> = Vec::new();
        // Each declared field with its type; an array of scalars
        // (`bit<8>[16] a` or `bit<8> a[16]`) is its elements, fields named
        // `a[0]`..`a[15]` that `s.a[K]` names (see `Checker::array_element`).
        let mut declared: Vec<(&ast::Field, String, ast::Type)> = Vec::new();
        for f in &s.fields {
            if let ast::TypeKind::Stack { elem, size } = &f.ty.kind
                && kind != ir::CompositeKind::Union
                && matches!(
                    self.ty(elem),
                    Some(Ty::Bit(_) | Ty::Int(_) | Ty::Bool | Ty::SerEnum(_))
                )
            {
                let Some(n) = self.const_u32(size, "array size") else {
                    continue;
                };
                for i in 0..n {
                    declared.push((f, format!("{}[{i}]", f.name.name), (**elem).clone()));
                }
                continue;
            }
            declared.push((f, f.name.name.clone(), f.ty.clone()));
        }
        for (f, fname, fty) in declared {
            let Some(ty) = self.ty(&fty) else { continue };
            let rust_name = crate::proc::namer::field_ident(&fname);
            if fields
                .iter()
                .any(|x| x.name == fname || crate::proc::namer::field_ident(&x.name) == rust_name)
            {
                self.error(
                    codes::DUPLICATE,
                    f.name.span,
                    format!("field `{}` declared twice", f.name.name),
                );
                continue;
            }
            match (kind, &ty) {
                (
                    ir::CompositeKind::Header,
                    Ty::Bit(_) | Ty::Int(_) | Ty::Bool | Ty::SerEnum(_),
                ) => {}
                (ir::CompositeKind::Header, Ty::Varbit(w)) => {
                    if fields.iter().any(|x| matches!(x.ty, Ty::Varbit(_))) {
                        self.error(
                            codes::TYPE_MISMATCH,
                            f.span,
                            "a header may have at most one varbit field",
                        );
                        continue;
                    }
                    if w % 8 != 0 {
                        self.unsupported(
                            f.ty.span,
                            "varbit fields whose maximum is not a whole number of bytes",
                        );
                        continue;
                    }
                }
                // A struct of bit strings, laid out flattened (P4_16 v1.2.2+).
                (ir::CompositeKind::Header, Ty::Composite(sc))
                    if self.prog.composites[*sc].kind == ir::CompositeKind::Struct
                        && ty.serial_width(&self.prog).is_some() => {}
                (ir::CompositeKind::Header, _) => {
                    self.error(
                        codes::TYPE_MISMATCH,
                        f.ty.span,
                        format!(
                            "header fields must be bit strings or structs of them, not {}",
                            self.ty_name(&ty)
                        ),
                    );
                    continue;
                }
                (ir::CompositeKind::Union, Ty::Composite(h))
                    if self.prog.composites[*h].kind == ir::CompositeKind::Header => {}
                (ir::CompositeKind::Union, _) => {
                    self.error(
                        codes::TYPE_MISMATCH,
                        f.ty.span,
                        "header union members must be headers",
                    );
                    continue;
                }
                // P4_16 §7.1.5: a string is only ever a compile-time
                // argument; no struct holds one (p4c's string-e1).
                (_, Ty::Str) => {
                    self.error(
                        codes::TYPE_MISMATCH,
                        f.ty.span,
                        "a struct field cannot be a `string`: strings are only compile-time arguments",
                    );
                    continue;
                }
                (_, Ty::Void) => {
                    self.error(
                        codes::TYPE_MISMATCH,
                        f.ty.span,
                        "a field cannot be `void`: `void` is only the return type of a function \
                         returning nothing",
                    );
                    continue;
                }
                _ => {}
            }
            let mut field_lists = Vec::new();
            for a in &f.annotations {
                if a.name.name == "field_list"
                    && let ast::AnnotationBody::Unstructured {
                        exprs: Some(es), ..
                    } = &a.body
                {
                    for e in es {
                        if let ast::ExprKind::Int(i) = &e.kind
                            && i.value < 256
                        {
                            field_lists.push(i.value as u8);
                        }
                    }
                }
            }
            if let Some(n) = self.nominal_of_type(&fty) {
                field_nominals.push((fields.len() as u32, n));
            }
            fields.push(ir::Field {
                name: fname,
                ty,
                field_lists,
                span: f.span,
            });
        }
        let controller_header = ast::find_annotation(&s.annotations, "controller_header")
            .and_then(|a| a.string_arg().map(|s| s.to_string()));
        let mut comp = ir::Composite {
            name,
            kind,
            fields,
            controller_header,
            padded: false,
        };
        let bits = comp.header_bits(&self.prog);
        if kind == ir::CompositeKind::Header && !bits.is_multiple_of(8) {
            if comp.varbit().is_some() {
                self.error(
                    codes::BAD_WIDTH,
                    s.name.span,
                    format!(
                        "header `{}` is {bits} bits long; headers with a varbit field must be a whole number of bytes",
                        s.name.name,
                    ),
                );
            } else {
                // p4c pads such a header for BMv2 with a last field up to
                // the next byte: it takes whole bytes on the wire, and the
                // padding bits are extracted and emitted as they came.
                let mut pad = "_padding".to_string();
                while comp.fields.iter().any(|f| f.name == pad) {
                    pad.push('_');
                }
                comp.fields.push(ir::Field {
                    name: pad,
                    ty: Ty::Bit(8 - bits % 8),
                    field_lists: Vec::new(),
                    span: s.name.span,
                });
                comp.padded = true;
            }
        }
        let h = self.prog.composites.append(comp, s.span);
        for (i, n) in field_nominals {
            self.field_nominal.insert((h.index(), i), n);
        }
        Some(h)
    }

    /// A serializable enum member's integer value fits the underlying type
    /// (P4_16 §8.3; p4c's serenum-typedef: "Serialized enum constant value
    /// 128 is out of bounds of the underlying type"). A value with a type of
    /// its own (`(I8)4*4*4*4`) wraps as any such value does. Returns false
    /// after reporting an error.
    fn enum_value_fits(&mut self, ty: &Ty, v: &ast::Expr) -> bool {
        let before = self.diags.len();
        let Some(expr::TE::Inf(n)) = self.expr_any(v) else {
            return self.diags.len() == before;
        };
        let (lo, hi, w) = match ty {
            Ty::Bit(w) => (0i128, (1i128 << (*w).min(126)) - 1, *w),
            Ty::Int(w) => (
                -(1i128 << w.saturating_sub(1).min(126)) + i128::from(*w == 0),
                (1i128 << w.saturating_sub(1).min(126)) - 1,
                *w,
            ),
            _ => return true,
        };
        if w > 126 || (lo..=hi).contains(&n) {
            return true;
        }
        self.error_label(
            codes::OVERFLOW,
            v.span,
            format!("enum value {n} does not fit {}", self.ty_name(ty)),
            "out of range",
        );
        false
    }

    pub(super) fn enum_decl(&mut self, e: &ast::EnumDecl) {
        let repr = match &e.underlying {
            Some(t) if let Some(n) = self.nominal_of_type(t) => {
                // P4_16 §8.3: the underlying type is a bit string; a `type`
                // over one is a new type (p4c's serenum-type: "Illegal type
                // for enum; only bit<> and int<> are allowed").
                self.error_label(
                    codes::TYPE_MISMATCH,
                    t.span,
                    "a serializable enum needs a bit<W> or int<W> type",
                    format!("`{n}` is a new type declared by `type`"),
                );
                return;
            }
            Some(t) => match self.ty(t) {
                Some(ty @ (Ty::Bit(_) | Ty::Int(_))) => Some(ty),
                Some(_) => {
                    self.error(
                        codes::TYPE_MISMATCH,
                        t.span,
                        "a serializable enum needs a bit<W> or int<W> type",
                    );
                    return;
                }
                None => return,
            },
            None => None,
        };
        let mut members = Vec::new();
        for (i, m) in e.members.iter().enumerate() {
            let v = match (&repr, &m.value) {
                (Some(ty), Some(v)) if !self.enum_value_fits(ty, v) => 0,
                (Some(ty), Some(v)) => match self.expr(v, Some(ty)) {
                    Some(ex) => match fold::const_int(&ex) {
                        Some(c) => c,
                        None => {
                            self.error(
                                codes::NOT_CONSTANT,
                                v.span,
                                "enum values must be constants",
                            );
                            0
                        }
                    },
                    None => 0,
                },
                (Some(_), None) => {
                    self.error(
                        codes::NOT_CONSTANT,
                        m.span,
                        "members of a serializable enum need a value",
                    );
                    0
                }
                (None, _) => i as u128,
            };
            if members.iter().any(|(n, _)| *n == m.name.name) {
                self.error(
                    codes::DUPLICATE,
                    m.span,
                    format!("enum member `{}` declared twice", m.name.name),
                );
            }
            members.push((m.name.name.clone(), v));
        }
        let serial = repr.is_some();
        let h = self.prog.enums.append(
            ir::EnumDecl {
                name: e.name.name.clone(),
                repr,
                members,
            },
            e.span,
        );
        let ty = if serial { Ty::SerEnum(h) } else { Ty::Enum(h) };
        self.declare(&e.name, Sym::Type(ty));
    }

    /// The plain enum whose members are the match kinds declared so far
    /// (later ones are added as declared): values of type `match_kind`
    /// (P4_16 §7.1.3) are held as a member's index, as enum values are, so
    /// they compare, fill tuples and reach user externs as `u32` codes.
    /// Made at the first use, so programs without one are unchanged.
    pub(crate) fn match_kind_enum(&mut self, span: Span) -> Handle<ir::EnumDecl> {
        if let Some(h) = self.match_kind_enum {
            return h;
        }
        let members = self
            .match_kinds
            .iter()
            .enumerate()
            .map(|(i, m)| (m.clone(), i as u128))
            .collect();
        let h = self.prog.enums.append(
            ir::EnumDecl {
                name: "match_kind".into(),
                repr: None,
                members,
            },
            span,
        );
        self.match_kind_enum = Some(h);
        h
    }
}
