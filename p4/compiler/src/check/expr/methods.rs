//! Method calls: of headers, unions, stacks and tables, and of extern
//! instances, with their type arguments and register/counter/meter indices.

use super::{TE, mk};
use crate::check::{BodyKind, Checker, Sym, codes};
use crate::diag::Span;
use crate::front::ast;
use crate::ir::{self, Builtin, Call, Expr, ExprKind, Ty};

impl Checker {
    pub(super) fn method(
        &mut self,
        base: &ast::Expr,
        member: &ast::Ident,
        type_args: &[ast::Type],
        args: &[&ast::Expr],
        span: Span,
    ) -> Option<Expr> {
        let m = member.name.as_str();
        if let ast::ExprKind::Name(p) = &base.kind {
            let mut sym = self.lookup(p).cloned();
            // A control with directionless `int` apply parameters, applied
            // directly: the copy checked for the values given, applied
            // with the other arguments.
            let rest: Vec<&ast::Expr>;
            let mut args = args;
            let body_kind = self.body.as_ref().map(|b| b.kind);
            if m == "apply"
                && let Some(Sym::CtorControl(n) | Sym::CtorParser(n)) = &sym
                && let Some(positions) = self.apply_int_params.get(n).cloned()
            {
                let parser = matches!(sym, Some(Sym::CtorParser(_)));
                if body_kind == Some(BodyKind::Apply) && !parser {
                    let (sub, others) = self.apply_int_args(n, &positions, args, span)?;
                    rest = others;
                    args = &rest;
                    sym = Some(Sym::Control(sub));
                } else if body_kind == Some(BodyKind::Parser) && parser {
                    let (sub, others) = self.apply_int_parser_args(n, &positions, args, span)?;
                    rest = others;
                    args = &rest;
                    sym = Some(Sym::SubParser(sub));
                }
            }
            // Direct type invocation (P4_16 §15.1): `C.apply(..)` applies a
            // fresh instance of C named like the type; `P.apply(..)` in a
            // parser state applies parser P.
            if m == "apply" {
                match sym {
                    Some(Sym::Control(sub)) => {
                        if let Some(ctl) = self
                            .body
                            .as_ref()
                            .filter(|b| b.kind == BodyKind::Apply)
                            .and_then(|b| b.control)
                        {
                            let name = self.prog.controls[sub].name.clone();
                            let c = &self.prog.controls[sub];
                            let has_objects = !c.tables.is_empty()
                                || !c.externs.is_empty()
                                || !c.instances.is_empty();
                            let twice = self.prog.controls[ctl]
                                .instances
                                .iter()
                                .any(|(n, _)| *n == name);
                            if has_objects && twice {
                                // Both instances would have one
                                // control-plane name (p4c names them
                                // after the type too).
                                self.error(
                                    codes::DUPLICATE,
                                    span,
                                    format!(
                                        "`{name}` is applied directly twice here and its tables or externs would share one control-plane name; instantiate it instead"
                                    ),
                                );
                                return None;
                            }
                            let sub = self.instance_copy(sub);
                            let instances = &mut self.prog.controls[ctl].instances;
                            sym = Some(Sym::SubControl(instances.len() as u32));
                            instances.push((name, sub));
                        }
                    }
                    Some(Sym::Parser(ph)) => sym = Some(Sym::SubParser(ph)),
                    _ => {}
                }
            }
            match sym {
                Some(Sym::Table(t)) => {
                    if !self.no_type_args(type_args, "a table's `apply`", span) {
                        return None;
                    }
                    if m != "apply" {
                        self.error(
                            codes::UNKNOWN_METHOD,
                            member.span,
                            format!("tables have no method `{m}`"),
                        );
                        return None;
                    }
                    if !self.in_control_apply(span) || !self.arg_count(span, "apply", 0, args.len())
                    {
                        return None;
                    }
                    return Some(Self::void_call(Call::TableApply(t), span));
                }
                Some(Sym::SubParser(ph)) => {
                    if m != "apply" {
                        self.error(
                            codes::UNKNOWN_METHOD,
                            member.span,
                            format!("parsers have no method `{m}`"),
                        );
                        return None;
                    }
                    if self.body.as_ref().map(|b| b.kind) != Some(BodyKind::Parser) {
                        self.error(
                            codes::NOT_ALLOWED_HERE,
                            span,
                            "sub-parsers may only be applied in parser states",
                        );
                        return None;
                    }
                    let without_externs = self.parser_apply_extern_args(ph, args, span)?;
                    let args = &without_externs[..];
                    let params = self.prog.parsers[ph].params.clone();
                    if !self.apply_arg_count(span, &params, args.len()) {
                        return None;
                    }
                    let mut v = Vec::new();
                    for (prm, a) in params.iter().zip(args) {
                        let Some(ty) = &prm.ty else {
                            let is_packet = matches!(&a.kind, ast::ExprKind::Name(p)
                                if matches!(self.lookup(p), Some(Sym::Packet(false))));
                            if !is_packet {
                                self.error(
                                    codes::TYPE_MISMATCH,
                                    a.span,
                                    "expected the packet_in parameter",
                                );
                                return None;
                            }
                            continue;
                        };
                        let x = if prm.dir == ir::Direction::In {
                            self.expr(a, Some(ty))?
                        } else {
                            let l = self.directed_arg(a, prm.dir == ir::Direction::Out, ty)?;
                            self.coerce(TE::Typed(l), ty, a.span)?
                        };
                        v.push(x);
                    }
                    v.extend(
                        params[args.len()..]
                            .iter()
                            .filter_map(|p| p.default.clone()),
                    );
                    return Some(Self::void_call(Call::ParserApply(ph, v), span));
                }
                Some(Sym::SubControl(i)) => {
                    if m != "apply" {
                        self.error(
                            codes::UNKNOWN_METHOD,
                            member.span,
                            format!("controls have no method `{m}`"),
                        );
                        return None;
                    }
                    if self.body.as_ref().map(|b| b.kind) != Some(BodyKind::Apply) {
                        self.error(
                            codes::NOT_ALLOWED_HERE,
                            span,
                            "controls may only be applied in an apply block",
                        );
                        return None;
                    }
                    let ctl = self.body.as_ref().and_then(|b| b.control)?;
                    let sub = self.prog.controls[ctl].instances[i as usize].1;
                    let without_externs = self.apply_extern_args(ctl, i, sub, args, span)?;
                    let args = &without_externs[..];
                    let params = self.prog.controls[sub].params.clone();
                    if !self.apply_arg_count(span, &params, args.len()) {
                        return None;
                    }
                    let mut v = Vec::new();
                    for (prm, a) in params.iter().zip(args) {
                        let Some(ty) = &prm.ty else {
                            // The only packet a control has is its own
                            // `packet_out`; the IR leaves it implicit.
                            let is_packet = matches!(&a.kind, ast::ExprKind::Name(p)
                                if matches!(self.lookup(p), Some(Sym::Packet(true))));
                            if !is_packet {
                                self.error(
                                    codes::TYPE_MISMATCH,
                                    a.span,
                                    "expected the packet_out parameter",
                                );
                                return None;
                            }
                            continue;
                        };
                        let x = if prm.dir == ir::Direction::In {
                            self.expr(a, Some(ty))?
                        } else {
                            let l = self.directed_arg(a, prm.dir == ir::Direction::Out, ty)?;
                            self.coerce(TE::Typed(l), ty, a.span)?
                        };
                        v.push(x);
                    }
                    v.extend(
                        params[args.len()..]
                            .iter()
                            .filter_map(|p| p.default.clone()),
                    );
                    return Some(Self::void_call(Call::ControlApply(i, v), span));
                }
                // A function sees no block's instances but the top-level
                // ones (P4_16 §10 declares functions at the top level; one
                // declared in a control sees that control's scope).
                Some(Sym::Extern(_))
                    if self.body.as_ref().map(|b| b.kind) == Some(BodyKind::Function) =>
                {
                    self.error_label(
                        codes::NOT_ALLOWED_HERE,
                        p.span,
                        format!(
                            "`{}` is an extern instance of the enclosing control: a function \
                             declared in a control cannot use its instances",
                            p.ident.name
                        ),
                        "declare the function at the top level, or pass what it needs",
                    );
                    return None;
                }
                Some(Sym::Extern(i)) => {
                    return self.extern_method(i, m, member.span, type_args, args, span);
                }
                // A top-level instance used in a parser or a function.
                Some(Sym::GlobalExtern) => {
                    let name = p.ident.name.clone();
                    return match self.global_in_body(&name, p.span) {
                        crate::check::blocks::GlobalUse::Index(i) => {
                            self.extern_method(i, m, member.span, type_args, args, span)
                        }
                        crate::check::blocks::GlobalUse::Reported => None,
                        crate::check::blocks::GlobalUse::NotHere => {
                            // A constant's initialiser or a declaration's
                            // argument: extern methods run per packet.
                            self.error_label(
                                codes::NOT_ALLOWED_HERE,
                                p.span,
                                format!(
                                    "`{name}`'s methods are called outside a control, parser, \
                                     action or function"
                                ),
                                "not in a block",
                            );
                            None
                        }
                    };
                }
                Some(Sym::ExternDecl(n)) if self.is_user_extern_type(&n) => {
                    self.error_label(
                        codes::WRONG_KIND,
                        base.span,
                        format!(
                            "`{n}` is an extern type: call `{m}` on an instance of it (`{n}(..) name;`)"
                        ),
                        "not an instance",
                    );
                    return None;
                }
                Some(Sym::Packet(out)) => {
                    return self.packet_method(out, m, member.span, type_args, args, span);
                }
                _ => {}
            }
        }
        let b = self.expr(base, None)?;
        if matches!(b.ty, Ty::Composite(_) | Ty::Stack(..))
            && matches!(
                m,
                "isValid" | "setValid" | "setInvalid" | "push_front" | "pop_front"
            )
            && !self.no_type_args(type_args, &format!("`{m}`"), span)
        {
            return None;
        }
        let builtin = match (&b.ty, m) {
            (Ty::Composite(c), "isValid")
                if self.prog.composites[*c].kind != ir::CompositeKind::Struct =>
            {
                if !self.arg_count(span, "isValid", 0, args.len()) {
                    return None;
                }
                return Some(mk(ExprKind::IsValid(Box::new(b)), Ty::Bool, span));
            }
            (Ty::Composite(c), "setValid" | "setInvalid")
                if self.prog.composites[*c].kind == ir::CompositeKind::Header =>
            {
                if !self.arg_count(span, m, 0, args.len()) || !self.writable(base) {
                    return None;
                }
                if m == "setValid" {
                    Builtin::SetValid(b)
                } else {
                    Builtin::SetInvalid(b)
                }
            }
            (Ty::Stack(..), "push_front" | "pop_front") => {
                if !self.arg_count(span, m, 1, args.len()) || !self.writable(base) {
                    return None;
                }
                let n = self.const_u32(args[0], "count")?;
                if m == "push_front" {
                    Builtin::PushFront(b, n)
                } else {
                    Builtin::PopFront(b, n)
                }
            }
            (ty, _) => {
                self.error_label(
                    codes::UNKNOWN_METHOD,
                    member.span,
                    format!("{} has no method `{m}`", self.ty_name(ty)),
                    "unknown method",
                );
                return None;
            }
        };
        Some(Self::void_call(Call::Builtin(Box::new(builtin)), span))
    }

    /// Extern instance `i` of the block being checked: a control's (in its
    /// apply block or actions), or a parser's or function's own list.
    pub(crate) fn body_extern(&self, i: u32) -> Option<ir::ExternInst> {
        let body = self.body.as_ref()?;
        match (body.kind, body.control) {
            (BodyKind::Apply | BodyKind::Action, Some(ctl)) => {
                self.prog.controls[ctl].externs.get(i as usize).cloned()
            }
            (BodyKind::Parser | BodyKind::Function, _) | (BodyKind::Action, None) => {
                body.externs.get(i as usize).map(|e| e.inst.clone())
            }
            _ => None,
        }
    }

    /// Type arguments given to something that has no type parameters
    /// (P4_16 §8.18: their number must match; p4c's issue3656 gives an
    /// action some). Reports them and returns false.
    pub(super) fn no_type_args(&mut self, type_args: &[ast::Type], what: &str, span: Span) -> bool {
        if type_args.is_empty() {
            return true;
        }
        self.error(
            codes::ARG_COUNT,
            span,
            format!("{what} takes no type arguments"),
        );
        false
    }

    fn extern_method(
        &mut self,
        i: u32,
        m: &str,
        mspan: Span,
        type_args: &[ast::Type],
        args: &[&ast::Expr],
        span: Span,
    ) -> Option<Expr> {
        let Some(inst) = self.body_extern(i) else {
            self.error(
                codes::NOT_ALLOWED_HERE,
                span,
                "extern objects may only be used in controls, parsers and functions",
            );
            return None;
        };
        if let ir::ExternKind::User { decl, .. } = inst.kind {
            return self.user_method_call(i, &inst.name, decl, m, mspan, type_args, args, span);
        }
        // Of v1model's methods only `meter.execute_meter<T>` has a type
        // parameter (the colour's type); the others take no type arguments
        // (P4_16 §8.18: their number must match the declaration's).
        if m == "execute_meter" && matches!(inst.kind, ir::ExternKind::Meter { .. }) {
            if type_args.len() > 1 {
                self.error(
                    codes::ARG_COUNT,
                    span,
                    format!(
                        "`execute_meter` takes 1 type argument, {} given",
                        type_args.len()
                    ),
                );
                return None;
            }
        } else if !self.no_type_args(type_args, &format!("`{}.{m}`", inst.name), span) {
            return None;
        }
        let b = match (&inst.kind, m) {
            (ir::ExternKind::Register { cell, .. }, "read") => {
                if !self.arg_count(span, "read", 2, args.len()) {
                    return None;
                }
                let out = self.out_arg(args[0], Some(cell))?;
                let out = self.coerce(TE::Typed(out), cell, args[0].span)?;
                self.check_register_cell_nominal(&inst, &out, args[0].span);
                let index = self.extern_index(&inst, args[1])?;
                Builtin::RegisterRead {
                    inst: i,
                    out,
                    index,
                }
            }
            (ir::ExternKind::Register { cell, .. }, "write") => {
                if !self.arg_count(span, "write", 2, args.len()) {
                    return None;
                }
                let index = self.extern_index(&inst, args[0])?;
                let value = self.expr(args[1], Some(cell))?;
                self.check_register_cell_nominal(&inst, &value, args[1].span);
                Builtin::RegisterWrite {
                    inst: i,
                    index,
                    value,
                }
            }
            (ir::ExternKind::Counter { .. }, "count") => {
                if !self.arg_count(span, "count", 1, args.len()) {
                    return None;
                }
                let index = self.extern_index(&inst, args[0])?;
                Builtin::CounterCount { inst: i, index }
            }
            (ir::ExternKind::DirectCounter(_), "count") => {
                if !self.arg_count(span, "count", 0, args.len()) {
                    return None;
                }
                self.facts.pending_counter_counts.push((i, span));
                Builtin::DirectCount
            }
            (ir::ExternKind::Meter { .. }, "execute_meter") => {
                if !self.arg_count(span, "execute_meter", 2, args.len()) {
                    return None;
                }
                let index = self.extern_index(&inst, args[0])?;
                let out = self.lvalue(args[1])?;
                if !self.holds_meter_colour(&out.ty) {
                    self.error(
                        codes::TYPE_MISMATCH,
                        args[1].span,
                        "a meter colour must go into a bit<W>, an enum bit<W> or an enum",
                    );
                    return None;
                }
                // An `out T` argument is exactly T.
                if let Some(t) = type_args.first() {
                    let want = self.ty(t)?;
                    if want != out.ty {
                        self.error(
                            codes::TYPE_MISMATCH,
                            args[1].span,
                            format!(
                                "`execute_meter<{}>` writes a {}: this argument is {}",
                                self.ty_name(&want),
                                self.ty_name(&want),
                                self.ty_name(&out.ty)
                            ),
                        );
                        return None;
                    }
                }
                Builtin::MeterExecute {
                    inst: i,
                    index,
                    out,
                }
            }
            (ir::ExternKind::DirectMeter(_), "read") => {
                if !self.arg_count(span, "read", 1, args.len()) {
                    return None;
                }
                if self.body.as_ref().map(|b| b.kind) != Some(BodyKind::Action) {
                    self.error(codes::NOT_ALLOWED_HERE, span, "direct_meter.read may only be called in an action of the table that owns the meter");
                    return None;
                }
                let out = self.lvalue(args[0])?;
                if !self.holds_meter_colour(&out.ty) {
                    self.error(
                        codes::TYPE_MISMATCH,
                        args[0].span,
                        "a meter colour must go into a bit<W>, an enum bit<W> or an enum",
                    );
                    return None;
                }
                self.facts.pending_meter_reads.push((i, span));
                Builtin::DirectMeterRead { inst: i, out }
            }
            _ => {
                self.error_label(
                    codes::UNKNOWN_METHOD,
                    mspan,
                    format!("`{}` has no method `{m}`", inst.name),
                    "unknown method",
                );
                return None;
            }
        };
        Some(Self::void_call(Call::Builtin(Box::new(b)), span))
    }

    /// Whether a meter may write its colour (0 green, 1 yellow, 2 red) into
    /// `ty`: a `bit<W>`, or a serializable `enum bit<W>`, which is held as
    /// its `bit<W>` (P4_16 §8.3; PINS declares `direct_meter<MeterColor_t>`
    /// with `enum bit<2> MeterColor_t`, and p4c takes it), or a plain enum:
    /// p4c's v1model back end turns a program's enums into `bit<32>`
    /// numbered in declaration order, so the colour code becomes the member
    /// declared at that position (stratum's `method_calls`:
    /// `direct_meter<meter_color_t>` over `enum { GREEN, RED, YELLOW }`
    /// reads yellow as `RED`, as BMv2 does).
    fn holds_meter_colour(&self, ty: &Ty) -> bool {
        match ty {
            Ty::Bit(_) | Ty::Enum(_) => true,
            Ty::SerEnum(e) => matches!(self.prog.enums[*e].repr, Some(Ty::Bit(_))),
            _ => false,
        }
    }

    /// The type arguments given to a call of v1model extern function
    /// `name`: all of its generic overload's or none
    /// (`crate::v1model::GENERIC_FUNCTIONS`), checked in count and
    /// returned as types (empty when none are given). `None` after an error.
    pub(super) fn explicit_type_args(
        &mut self,
        name: &str,
        type_args: &[ast::Type],
        n_args: usize,
        span: Span,
    ) -> Option<Vec<Ty>> {
        if type_args.is_empty() {
            return Some(Vec::new());
        }
        let Some(g) = crate::v1model::generic(name, n_args) else {
            // `log_msg(msg)`, the overload without type parameters.
            if crate::v1model::GENERIC_FUNCTIONS
                .iter()
                .any(|g| g.name == name)
            {
                self.no_type_args(
                    type_args,
                    &format!("`{name}` with {n_args} argument(s)"),
                    span,
                );
                return None;
            }
            return Some(Vec::new());
        };
        if type_args.len() != g.type_params.len() {
            self.error(
                codes::ARG_COUNT,
                span,
                format!(
                    "`{name}` takes {} type argument{} (`{name}<{}>`), {} given; give all or none",
                    g.type_params.len(),
                    if g.type_params.len() == 1 { "" } else { "s" },
                    g.type_params.join(", "),
                    type_args.len()
                ),
            );
            return None;
        }
        type_args.iter().map(|t| self.ty(t)).collect()
    }

    /// An `out`/`inout` argument (or an `in` one whose type is already
    /// fixed) of type `got` where the call's type argument `tp` is `want`:
    /// exactly that type. Reports and returns false otherwise.
    pub(super) fn same_as_type_arg(
        &mut self,
        f: &str,
        tp: &str,
        want: &Ty,
        got: &Ty,
        span: Span,
    ) -> bool {
        if want == got {
            return true;
        }
        let msg = format!(
            "`{f}` was given {tp} = {}, but this argument is {}",
            self.ty_name(want),
            self.ty_name(got)
        );
        let label = format!("this is {}", self.ty_name(got));
        self.error_label(codes::TYPE_MISMATCH, span, msg, label);
        false
    }

    /// An `in` argument typed by the call's type argument `tp` = `want`: an
    /// integer without a width takes it, a typed value must have it.
    pub(super) fn typed_by_arg(
        &mut self,
        f: &str,
        tp: &str,
        want: &Ty,
        te: TE,
        span: Span,
    ) -> Option<Expr> {
        if let TE::Typed(x) = &te
            && !self.same_as_type_arg(f, tp, want, &x.ty, span)
        {
            return None;
        }
        self.coerce(te, want, span)
    }

    /// P4_16 §7.6: a `register<T>`'s `read` and `write` take a `T` as
    /// written: of a `type`-declared T, a value of that type and no other
    /// (`register<Port_t>` into a `bit<9>` needs a cast), as p4c checks.
    fn check_register_cell_nominal(&mut self, inst: &ir::ExternInst, x: &Expr, span: Span) {
        if let Some(cell) = self.register_cell_nominal.get(&inst.span).cloned() {
            self.check_nominal_against(&cell, x, span, "pass");
        }
    }

    /// The `index` argument of a v1model `register`, `counter` or `meter`
    /// method, of the type the version declares
    /// (`crate::v1model::Object::index_ty`): `bit<32>` before 20200408, to
    /// which P4_16 converts only untyped integers (§8.11.2), then the
    /// instance's type argument `I` (an extern parameter's, for an instance
    /// passed to a control or parser).
    fn extern_index(&mut self, inst: &ir::ExternInst, arg: &ast::Expr) -> Option<Expr> {
        use crate::v1model::IndexTy;
        let it = self.expr_any(arg)?;
        let version = self.v1model_version;
        let declared =
            crate::v1model::object(inst.kind.type_name()).and_then(|o| o.index_ty(version));
        let want = match declared {
            Some(IndexTy::Bit32) => Ty::Bit(32),
            Some(IndexTy::TypeArg(_)) => match self.extern_index_ty.get(&inst.span) {
                Some(t) => t.clone(),
                None => return self.coerce_loose(it, &Ty::Bit(32), arg.span),
            },
            None => return self.coerce_loose(it, &Ty::Bit(32), arg.span),
        };
        if let TE::Typed(x) = &it
            && matches!(x.ty, Ty::Bit(_) | Ty::Int(_))
            && x.ty != want
        {
            let decl = match declared {
                Some(IndexTy::Bit32) => format!("`in bit<32> index` in v1model {version}"),
                _ => format!(
                    "`in I index`, and `{}` has I = {}",
                    inst.name,
                    self.ty_name(&want)
                ),
            };
            let msg = format!(
                "the index of `{}` must be {}, found {}: its methods declare {decl}; only integers without a width convert implicitly (P4_16 §8.11.2)",
                inst.name,
                self.ty_name(&want),
                self.ty_name(&x.ty)
            );
            let label = format!("cast it: `({})`", self.ty_name(&want));
            self.error_label(codes::WIDTH_MISMATCH, arg.span, msg, label);
            return None;
        }
        self.coerce(it, &want, arg.span)
    }
}
