//! Calls (P4_16 §6.8): arguments with copy-in/copy-out, table
//! applications, actions, and the dispatch to user and built-in callees.

use super::controls::has_call;
use super::*;

impl Gen<'_> {
    /// Arguments for a callee's parameters: returns (pre-statements,
    /// argument list, post-statements) implementing copy-in/copy-out.
    pub(super) fn args(
        &self,
        ctx: &Ctx<'_>,
        params: &[(Direction, Ty)],
        args: &[Expr],
    ) -> Result<CallArgs, BackError> {
        let mut pre = Vec::new();
        let mut list = Vec::new();
        let mut post = Vec::new();
        // An `in` argument that calls something is evaluated before the
        // call, in argument order with the copy-ins (P4_16 §8.1: left to
        // right): inside the argument list it would run after every
        // copy-in, and would borrow what the call already holds (`h` of an
        // action, `rt`). Then every `in` argument is, so none reads a value
        // a later one changes.
        let hoist_in = params
            .iter()
            .zip(args)
            .any(|((dir, _), a)| *dir == Direction::In && has_call(a));
        for ((dir, ty), a) in params.iter().zip(args) {
            match dir {
                Direction::In if hoist_in => {
                    let t = ctx.tmp("arg");
                    pre.push(format!(
                        "let {t} = {};",
                        self.to_native(&self.expr(ctx, a)?, ty)?
                    ));
                    list.push(t);
                }
                Direction::In => list.push(self.to_native(&self.expr(ctx, a)?, ty)?),
                Direction::Out | Direction::InOut => {
                    let t = ctx.tmp("arg");
                    let (copy_in, copy_out) = self.copy_in_out(ctx, *dir, a, ty, &t)?;
                    pre.push(copy_in);
                    list.push(format!("&mut {t}"));
                    post.push(copy_out);
                }
            }
        }
        Ok((pre, list, post))
    }

    /// The copy-in (`let mut t = ..;`) and copy-out statements of an
    /// `out`/`inout` argument `a` passed as `&mut t` (P4_16 §6.8: copy-in,
    /// copy-out). A slice (`f(h.a[3:0])`) is copied back into its bits of
    /// the base, leaving the others as they are. An `out` parameter starts
    /// with its headers invalid (§6.8), so one holding a header is not
    /// copied in. The copy-out is an assignment, so a union member it
    /// leaves valid is its union's only valid member (§8.20).
    fn copy_in_out(
        &self,
        ctx: &Ctx<'_>,
        dir: Direction,
        a: &Expr,
        ty: &Ty,
        t: &str,
    ) -> Result<(String, String), BackError> {
        if let ExprKind::Slice(base, hi, lo) = &a.kind {
            let p = self.place(ctx, base)?;
            if self.is_wide(&base.ty) {
                let copy_in = format!(
                    "let mut {t} = {};",
                    self.to_native(&self.expr(ctx, a)?, ty)?
                );
                let part = if self.is_wide(ty) {
                    t.to_string()
                } else {
                    format!("{}::from_u128({t} as u128)", wide_path(128))
                };
                let copy_out = format!("{p} = {p}.set_slice({hi}, {lo}, {part});");
                return Ok((copy_in, copy_out));
            }
            let copy_in = format!(
                "let mut {t} = {};",
                self.to_native(&self.expr(ctx, a)?, ty)?
            );
            let field = p4_target::bits::mask(hi - lo + 1) << lo;
            let copy_out = format!(
                "{p} = ((({p} as u128) & !{field:#x}u128) | ((({t} as u128) << {lo}) & {field:#x}u128)) as {};",
                self.rust_ty(&base.ty)?
            );
            return Ok((copy_in, copy_out));
        }
        let p = self.place(ctx, a)?;
        let copy_in = if dir == Direction::Out && self.holds_header(ty) {
            format!(
                "let mut {t}: {} = {};",
                self.rust_ty(ty)?,
                self.default_value(ty)?
            )
        } else {
            format!("let mut {t} = {p};")
        };
        let mut copy_out = format!("{p} = {t};");
        if let Some((union, keep)) = self.union_member(a) {
            let others = self.invalidate_union_siblings(&self.place(ctx, union)?, &union.ty, keep);
            copy_out.push_str(&format!(" if {p}.valid {{ {others} }}"));
        }
        Ok((copy_in, copy_out))
    }

    /// Whether a value of `ty` is or holds a header (a header union or
    /// stack, a struct or tuple with one): what an `out` parameter of this
    /// type starts with invalid.
    fn holds_header(&self, ty: &Ty) -> bool {
        match ty {
            Ty::Composite(c) => {
                let comp = &self.prog.composites[*c];
                comp.kind != CompositeKind::Struct
                    || comp.fields.iter().any(|f| self.holds_header(&f.ty))
            }
            Ty::Stack(..) => true,
            Ty::Tuple(items) => items.iter().any(|t| self.holds_header(t)),
            _ => false,
        }
    }

    pub(super) fn wrap_call(pre: Vec<String>, call: String, post: Vec<String>, q: &str) -> String {
        if pre.is_empty() {
            return format!("{call}{q}");
        }
        format!(
            "{{ {} let r__ = {call}; {} r__{q} }}",
            pre.join(" "),
            post.join(" ")
        )
    }

    pub(super) fn table_call(&self, ctx: &Ctx<'_>, t: Handle<Table>) -> Result<String, BackError> {
        let inst = match ctx.inst {
            Some(i) => i,
            None => return bad("tables can only be applied in controls", None),
        };
        let c = &self.prog.controls[self.prog.instances[inst].control];
        let idx = match c.tables.iter().position(|x| *x == t) {
            Some(i) => i,
            None => return bad("internal: table of another control", None),
        };
        Ok(format!(
            "{}{}({})",
            self.names.inst_tables[inst][idx],
            self.fn_turbofish(),
            ctx.pass
        ))
    }

    pub(super) fn action_fn(&self, inst: usize, a: Handle<Action>) -> Result<&str, BackError> {
        self.names.inst_actions[inst]
            .iter()
            .find(|(h, _)| *h == a)
            .map(|(_, n)| n.as_str())
            .ok_or(BackError {
                message: "internal: action not available in this control".into(),
                span: None,
            })
    }

    /// A call as an expression (`?` applied where the callee can exit).
    pub(super) fn call(&self, ctx: &Ctx<'_>, c: &Call, span: Span) -> Result<String, BackError> {
        match c {
            Call::Action(a, args) => {
                let inst = ctx.inst.ok_or(BackError {
                    message: "actions can only be called in controls".into(),
                    span: Some(span),
                })?;
                let act = &self.prog.actions[*a];
                let params: Vec<(Direction, Ty)> = act.vars[..act.n_params as usize]
                    .iter()
                    .map(|v| (v.param.unwrap_or(Direction::In), v.ty.clone()))
                    .collect();
                let (pre, list, post) = self.args(ctx, &params, args)?;
                let mut all = vec![ctx.pass.clone()];
                all.extend(list);
                let call = format!(
                    "{}{}({})",
                    self.action_fn(inst, *a)?,
                    self.fn_turbofish(),
                    all.join(", ")
                );
                Ok(Self::wrap_call(pre, call, post, "?"))
            }
            Call::Function(f, args) => {
                let func = &self.prog.functions[*f];
                let params: Vec<(Direction, Ty)> = func.vars[..func.n_params as usize]
                    .iter()
                    .map(|v| (v.param.unwrap_or(Direction::In), v.ty.clone()))
                    .collect();
                let (pre, mut list, post) = self.args(ctx, &params, args)?;
                let mut leading = Vec::new();
                if self.function_uses_runtime(*f) {
                    leading.push("rt".to_string());
                }
                if self.function_uses_env(*f) {
                    leading.push("env".to_string());
                }
                if self.names.user.is_some() && self.function_uses_user_externs(*f) {
                    leading.push(user_externs::EXT.to_string());
                }
                list.splice(0..0, leading);
                let call = format!("{}({})", self.names.functions[f.index()], list.join(", "));
                let call = self.native_to_value(&call, &func.ret);
                Ok(Self::wrap_call(pre, call, post, ""))
            }
            Call::TableApply(t) => Ok(format!("{}?", self.table_call(ctx, *t)?)),
            Call::ParserApply(ph, args) => {
                if ctx.kind != BodyKind::Parser {
                    return bad("internal: sub-parser outside a parser", Some(span));
                }
                let decl = &self.prog.parsers[*ph];
                let mut pre = Vec::new();
                let mut list = vec!["rt".to_string(), "env".to_string()];
                if self.names.user.is_some() {
                    list.push(user_externs::EXT.to_string());
                }
                list.push("packet__".to_string());
                let mut post = Vec::new();
                let typed = decl.params.iter().filter(|p| p.ty.is_some());
                for (p, a) in typed.zip(args) {
                    let ty = p.ty.clone().unwrap_or(Ty::Void);
                    let t = ctx.tmp("parg");
                    if p.dir == Direction::In {
                        pre.push(format!(
                            "let mut {t} = {};",
                            self.to_native(&self.expr(ctx, a)?, &ty)?
                        ));
                    } else {
                        let (copy_in, copy_out) = self.copy_in_out(ctx, p.dir, a, &ty, &t)?;
                        pre.push(copy_in);
                        post.push(copy_out);
                    }
                    list.push(format!("&mut {t}"));
                }
                let call = format!(
                    "{}{}({})",
                    self.names.parsers[ph.index()],
                    self.fn_turbofish(),
                    list.join(", ")
                );
                Ok(Self::wrap_call(pre, call, post, "?"))
            }
            Call::ControlApply(i, args) => {
                let inst = ctx.inst.ok_or(BackError {
                    message: "internal: control apply outside a control".into(),
                    span: Some(span),
                })?;
                let sub = self.prog.instances[inst].sub[*i as usize] as usize;
                let decl = &self.prog.controls[self.prog.instances[sub].control];
                // Every control parameter is passed as `&mut`; `in`
                // arguments are copies whose copy-out is dropped. The
                // packet (`packet_out`) is the caller's own, implied in the IR.
                let mut pre = Vec::new();
                let mut list = vec!["rt".to_string(), "env".to_string()];
                if self.names.user.is_some() {
                    list.push(user_externs::EXT.to_string());
                }
                let mut post = Vec::new();
                let mut args = args.iter();
                for p in &decl.params {
                    let Some(ty) = &p.ty else {
                        list.push("packet__".into());
                        continue;
                    };
                    let Some(a) = args.next() else {
                        return bad("internal: too few control arguments", Some(span));
                    };
                    let t = ctx.tmp("carg");
                    if p.dir == Direction::In {
                        pre.push(format!(
                            "let mut {t} = {};",
                            self.to_native(&self.expr(ctx, a)?, ty)?
                        ));
                    } else {
                        let (copy_in, copy_out) = self.copy_in_out(ctx, p.dir, a, ty, &t)?;
                        pre.push(copy_in);
                        post.push(copy_out);
                    }
                    list.push(format!("&mut {t}"));
                }
                let call = format!(
                    "{}{}({})",
                    self.names.inst_apply[sub],
                    self.fn_turbofish(),
                    list.join(", ")
                );
                Ok(Self::wrap_call(pre, call, post, "?"))
            }
            Call::Builtin(b)
                if matches!(
                    **b,
                    Builtin::UserMethod { .. } | Builtin::UserFunction { .. }
                ) =>
            {
                self.user_call(ctx, b, span)
            }
            Call::Builtin(b) => self.builtin(ctx, b, span),
        }
    }
}
