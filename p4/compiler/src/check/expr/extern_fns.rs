//! v1model extern functions (hash, random, checksums, clone, resubmit,
//! recirculate, digest, truncate, assert/assume) and their arguments.

use super::{TE, mk};
use crate::check::{BodyKind, Checker, codes};
use crate::diag::Span;
use crate::front::ast;
use crate::ir::{self, Builtin, Call, Expr, ExprKind, Ty};
use p4_target::info::HashAlgorithm;

impl Checker {
    /// A hash algorithm argument: a member of v1model's `HashAlgorithm`.
    /// p4c's BMv2 back end takes only the enum declared in `v1model.p4`
    /// (a program's own `enum HashAlgorithm` is refused: "expected a
    /// HashAlgorithm member. Are you using an up-to-date v1model.p4?").
    pub(crate) fn hash_algo(&mut self, e: &ast::Expr) -> Option<HashAlgorithm> {
        let x = self.expr(e, None)?;
        let member = match x.kind {
            ExprKind::EnumMember(h, i)
                if self.prog.enums[h].name == "HashAlgorithm"
                    && self.model_files.contains(&self.prog.enums.span(h).file) =>
            {
                Some((h, i))
            }
            _ => None,
        };
        let Some((h, i)) = member else {
            self.error(
                codes::TYPE_MISMATCH,
                e.span,
                "expected a member of v1model.p4's HashAlgorithm such as `HashAlgorithm.crc16`",
            );
            return None;
        };
        let en = &self.prog.enums[h];
        let name = en.members[i as usize].0.as_str();
        Some(match name {
            "crc32" => HashAlgorithm::Crc32,
            "crc32_custom" => HashAlgorithm::Crc32Custom,
            "crc16" => HashAlgorithm::Crc16,
            "crc16_custom" => HashAlgorithm::Crc16Custom,
            "random" => HashAlgorithm::Random,
            "identity" => HashAlgorithm::Identity,
            "csum16" => HashAlgorithm::Csum16,
            "xor16" => HashAlgorithm::Xor16,
            _ => {
                self.error(
                    codes::TYPE_MISMATCH,
                    e.span,
                    format!("`{name}` is not a hash algorithm"),
                );
                return None;
            }
        })
    }

    /// A field list argument: a list, struct or header; flattened by the back
    /// end. The call's type argument (`hash<O, T, D, M>`'s D,
    /// `update_checksum<T, O>`'s T), when given, is its type.
    fn data_arg(&mut self, e: &ast::Expr, want: Option<&Ty>) -> Option<Vec<Expr>> {
        let x = self.expr(e, want)?;
        let ok = |t: &Ty| !matches!(t, Ty::Stack(..) | Ty::Varbit(_) | Ty::Str | Ty::Void);
        if !ok(&x.ty) {
            self.error(
                codes::TYPE_MISMATCH,
                e.span,
                format!("{} cannot be used as a field list", self.ty_name(&x.ty)),
            );
            return None;
        }
        Some(vec![x])
    }

    fn const_u8(&mut self, e: &ast::Expr) -> Option<u8> {
        let v = self.const_value(e)?;
        if !(0..=255).contains(&v) {
            self.error(
                codes::OVERFLOW,
                e.span,
                "a field list index must be 0..=255",
            );
            return None;
        }
        Some(v as u8)
    }

    fn in_control(&mut self, span: Span, what: &str) -> bool {
        match self.body.as_ref().map(|b| b.kind) {
            Some(BodyKind::Apply | BodyKind::Action) => true,
            _ => {
                self.error(
                    codes::NOT_ALLOWED_HERE,
                    span,
                    format!("`{what}` may only be called in controls and actions"),
                );
                false
            }
        }
    }

    pub(super) fn extern_fn(
        &mut self,
        name: &str,
        type_args: &[ast::Type],
        args: &[&ast::Expr],
        span: Span,
    ) -> Option<Expr> {
        // The extern functions of core.p4 and v1model.p4 that have no type
        // parameters.
        const PLAIN: &[&str] = &[
            "mark_to_drop",
            "verify",
            "static_assert",
            "clone",
            "truncate",
            "assert",
            "assume",
            "clone_preserving_field_list",
            "resubmit_preserving_field_list",
            "recirculate_preserving_field_list",
        ];
        // The program's own overload of a v1model name (another arity).
        if !crate::v1model::functions(name).any(|s| s.params.len() == args.len())
            && self.is_user_function(name)
        {
            return self.user_function_call(name, type_args, args, span);
        }
        if PLAIN.contains(&name)
            && crate::v1model::functions(name).next().is_some()
            && !self.no_type_args(type_args, &format!("`{name}`"), span)
        {
            return None;
        }
        let explicit = self.explicit_type_args(name, type_args, args.len(), span)?;
        let b = match name {
            "mark_to_drop" => {
                if args.is_empty() {
                    // Deprecated form: the enclosing control's standard metadata.
                    let ctl = self.body.as_ref().and_then(|b| b.control);
                    if ctl.is_none() && self.body.as_ref().map(|b| b.kind) == Some(BodyKind::Action)
                    {
                        // A top-level action: the control that runs it.
                        self.uses_implicit_std_meta = true;
                        return Some(Self::void_call(
                            Call::Builtin(Box::new(Builtin::MarkToDropImplicit)),
                            span,
                        ));
                    }
                    let found = ctl.and_then(|c| self.std_meta_param(c));
                    let (Some(c), Some(i)) = (ctl, found) else {
                        self.error(
                            codes::NOT_ALLOWED_HERE,
                            span,
                            "`mark_to_drop()` needs a control with a standard_metadata_t parameter",
                        );
                        return None;
                    };
                    let ty = self.prog.controls[c].params[i]
                        .ty
                        .clone()
                        .unwrap_or(Ty::Void);
                    let sm = mk(ExprKind::Var(ir::VarRef::BlockParam(i as u32)), ty, span);
                    return Some(Self::void_call(
                        Call::Builtin(Box::new(Builtin::MarkToDrop(sm))),
                        span,
                    ));
                }
                if !self.arg_count(span, "mark_to_drop", 1, args.len()) {
                    return None;
                }
                let sm = self.lvalue(args[0])?;
                match &sm.ty {
                    Ty::Composite(c) if self.prog.composites[*c].name == "standard_metadata_t" => {}
                    _ => {
                        self.error(
                            codes::TYPE_MISMATCH,
                            args[0].span,
                            "mark_to_drop needs the standard metadata",
                        );
                        return None;
                    }
                }
                Builtin::MarkToDrop(sm)
            }
            "hash" => {
                if !self.arg_count(span, "hash", 5, args.len()) {
                    return None;
                }
                let out = self.lvalue(args[0])?;
                if !matches!(out.ty, Ty::Bit(_)) {
                    self.error(
                        codes::TYPE_MISMATCH,
                        args[0].span,
                        "the hash result must be a bit<W>",
                    );
                    return None;
                }
                if let Some(o) = explicit.first()
                    && !self.same_as_type_arg("hash", "O", o, &out.ty, args[0].span)
                {
                    return None;
                }
                let algo = self.hash_algo(args[1])?;
                let base_te = self.expr_any(args[2])?;
                let max_te = self.expr_any(args[4])?;
                // Given type arguments T and M type `base` and `max`.
                let given = explicit.get(1).zip(explicit.get(3));
                // Without them, `base` and `max` have type parameters of
                // their own (T, M in v1model.p4): an integer without a width
                // gives them none, and p4c refuses it ("could not infer a
                // width").
                let mut widthless = false;
                for (te, a) in [(&base_te, args[2]), (&max_te, args[4])] {
                    if given.is_none() && matches!(te, TE::Inf(_)) {
                        self.error_label(
                            codes::TYPE_MISMATCH,
                            a.span,
                            "cannot infer the width of this hash argument: its type is a type \
                             parameter of `hash`; give the integer one (`16w0`, `(bit<32>)1024`)",
                            "no width",
                        );
                        widthless = true;
                    }
                }
                if widthless {
                    return None;
                }
                let base = match given {
                    Some((t, _)) => self.typed_by_arg("hash", "T", t, base_te, args[2].span)?,
                    None => self.coerce_loose(base_te, &out.ty, args[2].span)?,
                };
                let data = self.data_arg(args[3], explicit.get(2))?;
                let max = match given {
                    Some((_, m)) => self.typed_by_arg("hash", "M", m, max_te, args[4].span)?,
                    None => self.coerce_loose(max_te, &Ty::Bit(64), args[4].span)?,
                };
                Builtin::Hash {
                    out,
                    algo,
                    base,
                    data,
                    max,
                }
            }
            "random" => {
                if !self.arg_count(span, "random", 3, args.len()) {
                    return None;
                }
                let out = self.lvalue(args[0])?;
                if !matches!(out.ty, Ty::Bit(_)) {
                    self.error(
                        codes::TYPE_MISMATCH,
                        args[0].span,
                        "random needs a bit<W> result",
                    );
                    return None;
                }
                if let Some(t) = explicit.first()
                    && !self.same_as_type_arg("random", "T", t, &out.ty, args[0].span)
                {
                    return None;
                }
                let ty = out.ty.clone();
                let lo = self.expr(args[1], Some(&ty))?;
                let hi = self.expr(args[2], Some(&ty))?;
                Builtin::Random { out, lo, hi }
            }
            "verify_checksum"
            | "update_checksum"
            | "verify_checksum_with_payload"
            | "update_checksum_with_payload" => {
                if !self.arg_count(span, name, 4, args.len()) {
                    return None;
                }
                let cond = self.expr(args[0], Some(&Ty::Bool))?;
                let data = self.data_arg(args[1], explicit.first())?;
                let with_payload = name.ends_with("payload");
                let algo = self.hash_algo(args[3])?;
                if with_payload && algo != HashAlgorithm::Csum16 {
                    self.unsupported(args[3].span, "checksums with payload other than csum16");
                    return None;
                }
                let verify = name.starts_with("verify");
                let checksum = if verify {
                    self.expr(args[2], None)?
                } else {
                    self.lvalue(args[2])?
                };
                if let Some(o) = explicit.get(1)
                    && !self.same_as_type_arg(name, "O", o, &checksum.ty, args[2].span)
                {
                    return None;
                }
                if verify {
                    Builtin::VerifyChecksum {
                        cond,
                        data,
                        checksum,
                        algo,
                        with_payload,
                    }
                } else {
                    Builtin::UpdateChecksum {
                        cond,
                        data,
                        checksum,
                        algo,
                        with_payload,
                    }
                }
            }
            "clone" | "clone3" | "clone_preserving_field_list" => {
                let want = if name == "clone" { 2 } else { 3 };
                if !self.in_control(span, name) || !self.arg_count(span, name, want, args.len()) {
                    return None;
                }
                let kind = self.expr(args[0], None)?;
                if !matches!(&kind.ty, Ty::Enum(e) if self.prog.enums[*e].name == "CloneType") {
                    self.error(
                        codes::TYPE_MISMATCH,
                        args[0].span,
                        "expected `CloneType.I2E` or `CloneType.E2E`",
                    );
                    return None;
                }
                let session = self.expr(args[1], Some(&Ty::Bit(32)))?;
                let field_list = match name {
                    "clone_preserving_field_list" => Some(self.const_u8(args[2])?),
                    "clone3" => {
                        let data = self.expr(args[2], explicit.first())?;
                        Some(self.synth_field_list(&data, args[2].span, name)?)
                    }
                    _ => None,
                };
                Builtin::Clone {
                    kind,
                    session,
                    field_list,
                }
            }
            "resubmit_preserving_field_list" | "recirculate_preserving_field_list" => {
                if !self.in_control(span, name) || !self.arg_count(span, name, 1, args.len()) {
                    return None;
                }
                let n = self.const_u8(args[0])?;
                if name.starts_with("resubmit") {
                    Builtin::Resubmit(n)
                } else {
                    Builtin::Recirculate(n)
                }
            }
            "resubmit" | "recirculate" => {
                // Deprecated form: the fields named in `data` travel with
                // the packet, through a field list made up for them.
                if !self.in_control(span, name) || !self.arg_count(span, name, 1, args.len()) {
                    return None;
                }
                let data = self.expr(args[0], explicit.first())?;
                let n = self.synth_field_list(&data, args[0].span, name)?;
                if name == "resubmit" {
                    Builtin::Resubmit(n)
                } else {
                    Builtin::Recirculate(n)
                }
            }
            "digest" => {
                if !self.in_control(span, name) || !self.arg_count(span, "digest", 2, args.len()) {
                    return None;
                }
                let _receiver = self.expr(args[0], Some(&Ty::Bit(32)))?;
                let want = match type_args.first() {
                    Some(t) => Some(self.ty(t)?),
                    None => None,
                };
                let data = self.expr(args[1], want.as_ref())?;
                let data = match &data.ty {
                    Ty::Tuple(_) => self.tuple_as_struct(data)?,
                    _ => data,
                };
                // A bit string (p4c: P4Info `type_spec.bitstring`), named
                // after its `typedef` when the type argument names one.
                if matches!(data.ty, Ty::Bit(_) | Ty::Int(_) | Ty::Bool | Ty::SerEnum(_)) {
                    if data.ty.scalar_width(&self.prog).unwrap_or(0) > 128 {
                        self.unsupported(
                            args[1].span,
                            "digests of a bit string wider than 128 bits",
                        );
                        return None;
                    }
                    let named = type_args.first().and_then(|t| match &t.kind {
                        ast::TypeKind::Named { name, args } if args.is_empty() => {
                            Some(name.ident.name.clone())
                        }
                        _ => None,
                    });
                    let digest = self.facts.scalar_digest_index(named, data.ty.clone(), span);
                    return Some(Self::void_call(
                        Call::Builtin(Box::new(Builtin::Digest {
                            digest,
                            data: vec![data],
                        })),
                        span,
                    ));
                }
                let Ty::Composite(c) = data.ty else {
                    self.error(
                        codes::TYPE_MISMATCH,
                        args[1].span,
                        "digest data must be a struct, a header, a tuple or a bit string",
                    );
                    return None;
                };
                if self.has_varbit(&data.ty) {
                    self.unsupported(args[1].span, "digests of data with varbit fields");
                    return None;
                }
                let digest = self.facts.digest_index(c);
                Builtin::Digest {
                    digest,
                    data: vec![data],
                }
            }
            "truncate" => {
                if !self.in_control(span, name) || !self.arg_count(span, "truncate", 1, args.len())
                {
                    return None;
                }
                Builtin::Truncate(self.expr(args[0], Some(&Ty::Bit(32)))?)
            }
            "assert" | "assume" => {
                if !self.in_control(span, name) || !self.arg_count(span, name, 1, args.len()) {
                    return None;
                }
                Builtin::Assert(self.expr(args[0], Some(&Ty::Bool))?)
            }
            "log_msg" => {
                // `log_msg(string msg)` and `log_msg<T>(string msg, in T data)`.
                if args.is_empty() || args.len() > 2 {
                    self.arg_count(span, "log_msg", 1, args.len());
                    return None;
                }
                if !matches!(args[0].kind, ast::ExprKind::Str(_)) {
                    self.error_label(
                        codes::TYPE_MISMATCH,
                        args[0].span,
                        "the message of `log_msg` must be a string literal",
                        "not a string",
                    );
                    return None;
                }
                if let Some(data) = args.get(1) {
                    if let Some(t) = explicit.first() {
                        self.expr(data, Some(t))?;
                    } else {
                        self.expr_any(data)?;
                    }
                }
                Builtin::LogMsg
            }
            "verify" => {
                if self.body.as_ref().map(|b| b.kind) != Some(BodyKind::Parser) {
                    self.error(
                        codes::NOT_ALLOWED_HERE,
                        span,
                        "`verify` may only be called in parsers",
                    );
                    return None;
                }
                if !self.arg_count(span, "verify", 2, args.len()) {
                    return None;
                }
                let c = self.expr(args[0], Some(&Ty::Bool))?;
                let e = self.expr(args[1], Some(&Ty::Error))?;
                Builtin::Verify(c, e)
            }
            "static_assert" => {
                if args.is_empty() || args.len() > 2 {
                    self.arg_count(span, "static_assert", 1, args.len());
                    return None;
                }
                let c = self.expr(args[0], Some(&Ty::Bool))?;
                match c.kind {
                    ExprKind::Bool(true) => {}
                    ExprKind::Bool(false) => {
                        let msg = match args.get(1).map(|a| &a.kind) {
                            Some(ast::ExprKind::Str(m)) => m.clone(),
                            _ => "static assertion failed".to_string(),
                        };
                        self.error_label(codes::STATIC_ASSERT, span, msg, "this is false");
                        return None;
                    }
                    _ => {
                        self.error(
                            codes::NOT_CONSTANT,
                            args[0].span,
                            "static_assert needs a compile-time condition",
                        );
                        return None;
                    }
                }
                return Some(mk(ExprKind::Bool(true), Ty::Bool, span));
            }
            other => return self.user_function_call(other, type_args, args, span),
        };
        Some(Self::void_call(Call::Builtin(Box::new(b)), span))
    }

    /// A made-up field list (index 255 down) for the deprecated
    /// `resubmit(data)` / `recirculate(data)` / `clone3(.., data)`: the
    /// top-level fields of the structs that `data` names.
    fn synth_field_list(&mut self, data: &Expr, span: Span, what: &str) -> Option<u8> {
        // p4c's BMv2 back end (its issue 1653): a struct passed whole may
        // not hold a header; its fields travel as metadata.
        if let Ty::Composite(c) = &data.ty
            && self.prog.composites[*c].kind == ir::CompositeKind::Struct
            && let Some(f) = self.prog.composites[*c].fields.iter().find(|f| {
                matches!(&f.ty, Ty::Composite(h)
                    if self.prog.composites[*h].kind == ir::CompositeKind::Header)
            })
        {
            let msg = format!(
                "v1model does not support header `{}` inside the struct passed to `{what}`",
                f.name
            );
            self.error_label(
                codes::TYPE_MISMATCH,
                span,
                msg,
                "pass metadata fields, e.g. `{ meta.a }`",
            );
            return None;
        }
        let mut fields = Vec::new();
        let mut items = Vec::new();
        match &data.kind {
            ExprKind::List(v) => items.extend(v.iter().cloned()),
            _ => items.push(data.clone()),
        }
        for it in &items {
            // Walk to the root variable; remember the first member taken.
            let mut e = it;
            let mut first = None;
            while let ExprKind::Member(b, i) = &e.kind {
                first = Some(*i);
                e = b;
            }
            match (&e.kind, first, &e.ty) {
                (ExprKind::Var(_), Some(i), root) => fields.push((root.clone(), i)),
                (ExprKind::Var(_), None, Ty::Composite(c)) => {
                    for i in 0..self.prog.composites[*c].fields.len() {
                        fields.push((e.ty.clone(), i as u32));
                    }
                }
                _ => {
                    self.error(
                        codes::TYPE_MISMATCH,
                        span,
                        "expected metadata fields, e.g. `{ meta.a, meta.b }`",
                    );
                    return None;
                }
            }
        }
        let k = self.prog.synth_field_lists.len();
        if k >= 64 {
            self.unsupported(span, "more than 64 deprecated field-list calls");
            return None;
        }
        let n = 255 - k as u8;
        self.prog.synth_field_lists.push((n, fields));
        Some(n)
    }
}
