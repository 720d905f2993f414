//! Statements (P4_16 §11): blocks, assignments, `if`/`switch`, loops with
//! labelled `break`/`continue`, `return`/`exit`.

use super::*;

impl Gen<'_> {
    pub(super) fn block(&mut self, ctx: &Ctx<'_>, b: &Block) -> Result<(), BackError> {
        for s in b {
            self.stmt(ctx, s)?;
        }
        Ok(())
    }

    pub(super) fn ret_unit(ctx: &Ctx<'_>) -> &'static str {
        match ctx.kind {
            BodyKind::Control | BodyKind::Parser => "return Ok(());",
            BodyKind::Function => "return;",
        }
    }

    pub(super) fn stmt(&mut self, ctx: &Ctx<'_>, s: &Stmt) -> Result<(), BackError> {
        match s {
            Stmt::Assign(lhs, rhs, _) => {
                let v = match &rhs.kind {
                    ExprKind::List(items) if matches!(rhs.ty, Ty::Stack(..)) => {
                        let next = format!("{}.next", self.place(ctx, lhs)?);
                        self.stack_value(ctx, items, &rhs.ty, &next)?
                    }
                    _ => self.expr(ctx, rhs)?,
                };
                let line = self.assign_native(ctx, lhs, &v)?;
                self.w.line(line);
                // A valid header assigned to a member of a union makes it
                // the union's only valid member (§8.20); an invalid one
                // only leaves that member invalid.
                if let Some((union, keep)) = self.union_member(lhs) {
                    let place = self.place(ctx, lhs)?;
                    let others =
                        self.invalidate_union_siblings(&self.place(ctx, union)?, &union.ty, keep);
                    self.w.line(format!("if {place}.valid {{ {others} }}"));
                }
            }
            Stmt::Decl(i, init) => {
                let var = &ctx.vars[*i as usize];
                let n = &ctx.var_names[*i as usize];
                let v = match init {
                    Some(e) => self.to_native(&self.expr(ctx, e)?, &var.ty)?,
                    None => self.default_value(&var.ty)?,
                };
                if ctx.kind == BodyKind::Parser {
                    self.w.line(format!("{n} = {v};"));
                } else {
                    let t = self.rust_ty(&var.ty)?;
                    self.w.line(format!("let mut {n}: {t} = {v};"));
                }
            }
            Stmt::If(c, t, e) => {
                let c = self.expr(ctx, c)?;
                self.w.open(format!("if {c} {{"));
                self.block(ctx, t)?;
                if let Some(e) = e {
                    self.w.reopen("} else {");
                    self.block(ctx, e)?;
                }
                self.w.close("}");
            }
            Stmt::Block(b) => {
                self.w.open("{");
                self.block(ctx, b)?;
                self.w.close("}");
            }
            Stmt::Switch(e, _) if self.is_wide(&e.ty) => {
                return self.refuse_wide("a switch statement", Some(e.span));
            }
            Stmt::Switch(e, cases) => {
                let v = self.expr(ctx, e)?;
                self.w.open(format!("match {v} {{"));
                let mut pending: Vec<String> = Vec::new();
                let mut has_default = false;
                for c in cases {
                    if c.is_default {
                        has_default = true;
                        pending.clear();
                        pending.push("_".into());
                    } else {
                        for l in &c.labels {
                            pending.push(self.pattern(l)?);
                        }
                    }
                    if let Some(body) = &c.body {
                        self.w.open(format!("{} => {{", pending.join(" | ")));
                        self.block(ctx, body)?;
                        self.w.close("}");
                        pending.clear();
                    }
                }
                if !has_default {
                    self.w.line("_ => {}");
                }
                self.w.close("}");
            }
            Stmt::SwitchAction(t, cases) => {
                let call = self.table_call(ctx, *t)?;
                self.w.open(format!("match {call}?.action_run {{"));
                let mut pending: Vec<String> = Vec::new();
                let mut has_default = false;
                for c in cases {
                    if c.is_default {
                        has_default = true;
                        pending.clear();
                        pending.push("_".into());
                    } else {
                        for a in &c.actions {
                            pending.push(format!("{:#x}", self.info.layout.action_ids[a.index()]));
                        }
                    }
                    if let Some(body) = &c.body {
                        self.w.open(format!("{} => {{", pending.join(" | ")));
                        self.block(ctx, body)?;
                        self.w.close("}");
                        pending.clear();
                    }
                }
                if !has_default {
                    self.w.line("_ => {}");
                }
                self.w.close("}");
            }
            Stmt::Call(Call::Builtin(b), span) => {
                let lines = self.builtin_lines(ctx, b, *span)?;
                // Temporaries get their own block so names never clash.
                let scoped = lines.len() > 1 && lines.iter().any(|l| l.starts_with("let "));
                if scoped {
                    self.w.open("{");
                }
                for l in lines {
                    if l == "}" {
                        self.w.close("}");
                    } else if l.ends_with('{') {
                        self.w.open(l);
                    } else {
                        self.w.line(l);
                    }
                }
                if scoped {
                    self.w.close("}");
                }
            }
            Stmt::Call(c, span) => {
                let e = self.call(ctx, c, *span)?;
                self.w.line(format!("{e};"));
            }
            Stmt::Exit => match ctx.kind {
                BodyKind::Control => self.w.line("return Err(Exit);"),
                _ => return bad("`exit` is only supported in controls", None),
            },
            Stmt::Return(None) => self.w.line(Self::ret_unit(ctx)),
            Stmt::Return(Some(e)) => {
                let v = self.to_native(&self.expr(ctx, e)?, &e.ty)?;
                self.w.line(format!("return {v};"));
            }
            Stmt::Break => {
                let n = self.loops.last().copied().unwrap_or(0);
                self.w.line(format!("break 'loop{n};"));
            }
            Stmt::Continue => {
                let n = self.loops.last().copied().unwrap_or(0);
                self.w.line(format!("break 'pass{n};"));
            }
            Stmt::For { cond, update, body } => {
                let n = self.open_loop("loop");
                if let Some(c) = cond {
                    let c = self.expr(ctx, c)?;
                    self.w.line(format!("if !{c} {{ break; }}"));
                }
                self.loop_pass(ctx, n, body)?;
                self.block(ctx, update)?;
                self.close_loop();
            }
            Stmt::ForRange { var, lo, hi, body } => {
                let (w, signed) = (self.width(&lo.ty), lo.ty.is_signed(self.prog));
                self.w.open("{");
                self.w
                    .line(format!("let lo__: u128 = {};", self.expr(ctx, lo)?));
                self.w
                    .line(format!("let hi__: u128 = {};", self.expr(ctx, hi)?));
                let empty = if signed {
                    format!("{BITS}::lt_s(hi__, lo__, {w})")
                } else {
                    "hi__ < lo__".to_string()
                };
                self.w.line("let mut it__ = lo__;");
                self.w.open(format!("if !({empty}) {{"));
                let n = self.open_loop("loop");
                let v = self.to_native("it__", &lo.ty)?;
                self.w.line(format!(
                    "{} = {v};",
                    self.var_place(ctx, VarRef::Local(*var))
                ));
                self.loop_pass(ctx, n, body)?;
                self.w.line("if it__ == hi__ { break; }");
                self.w
                    .line(format!("it__ = {BITS}::wrap(it__.wrapping_add(1), {w});"));
                self.close_loop();
                self.w.close("}");
                self.w.close("}");
            }
            Stmt::ForStack { var, stack, body } => {
                let n = self.stack_len(&stack.ty);
                let place = self.place(ctx, stack)?;
                let label = self.open_loop(&format!("for i__ in 0..{n}"));
                self.w.line(format!(
                    "{} = {place}.elems[i__];",
                    self.var_place(ctx, VarRef::Local(*var))
                ));
                self.loop_pass(ctx, label, body)?;
                self.close_loop();
            }
        }
        Ok(())
    }

    /// Opens loop `head` (`loop`, `for .. in ..`) labelled `'loopN`;
    /// returns N. `break` leaves `'loopN`.
    pub(super) fn open_loop(&mut self, head: &str) -> u32 {
        let n = self.next_loop;
        self.next_loop += 1;
        self.loops.push(n);
        self.w.open(format!("'loop{n}: {head} {{"));
        n
    }

    pub(super) fn close_loop(&mut self) {
        self.loops.pop();
        self.w.close("}");
    }

    /// One pass of a loop body in a block labelled `'passN`, which
    /// `continue` leaves.
    pub(super) fn loop_pass(
        &mut self,
        ctx: &Ctx<'_>,
        n: u32,
        body: &Block,
    ) -> Result<(), BackError> {
        self.w.open(format!("'pass{n}: {{"));
        self.block(ctx, body)?;
        self.w.close("}");
        Ok(())
    }

    pub(super) fn pattern(&self, e: &Expr) -> Result<String, BackError> {
        Ok(match &e.kind {
            ExprKind::Int(v) => lit(*v),
            ExprKind::ErrorCode(c) => format!("{c}u32"),
            ExprKind::Bool(b) => b.to_string(),
            ExprKind::EnumMember(h, i) => match &self.prog.enums[*h].repr {
                Some(_) => lit(self.prog.enums[*h].members[*i as usize].1),
                None => format!("{i}u32"),
            },
            _ => return bad("switch labels must be constants", Some(e.span)),
        })
    }
}

impl Gen<'_> {
    /// `e` is member `keep` of a header union: the union expression and
    /// `keep`.
    pub(super) fn union_member<'e>(&self, e: &'e Expr) -> Option<(&'e Expr, u32)> {
        match &e.kind {
            ExprKind::Member(base, keep)
                if matches!(&base.ty, Ty::Composite(c)
                    if self.prog.composites[*c].kind == CompositeKind::Union) =>
            {
                Some((base, *keep))
            }
            _ => None,
        }
    }

    /// Statements that mark every member of the header union at
    /// `union_place` invalid except member `keep`: making one member of a
    /// union valid (`setValid`, `extract`, assigning a valid header) makes
    /// the others invalid (P4_16 §8.20), as the reference switch does.
    pub(super) fn invalidate_union_siblings(
        &self,
        union_place: &str,
        union_ty: &Ty,
        keep: u32,
    ) -> String {
        let Ty::Composite(c) = union_ty else {
            return String::new();
        };
        let fields = &self.prog.composites[*c].fields;
        let others: Vec<String> = (0..fields.len() as u32)
            .filter(|&i| i != keep)
            .map(|i| {
                format!(
                    "{union_place}.{}.valid = false;",
                    field_ident(&fields[i as usize].name)
                )
            })
            .collect();
        others.join(" ")
    }
}
