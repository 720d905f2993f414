//! Functions, actions, tables and control instances (P4_16 §13, §14):
//! each control instance becomes free functions over the runtime.

use super::*;
use crate::ir::info::{MatchKind, ProgramInfo, TableInfo};

impl Gen<'_> {
    /// A namer for a body's locals and parameters: it avoids `reserved` and
    /// the program constants, which a Rust binding of the same name would
    /// match as a pattern instead of shadowing.
    pub(super) fn local_namer(&self, reserved: &[&str]) -> Namer {
        let mut all: Vec<&str> = reserved.to_vec();
        all.extend(self.names.constants.iter().map(String::as_str));
        Namer::with_reserved(&all)
    }

    pub(super) fn var_names(&self, vars: &[Var], reserved: &[&str]) -> Vec<String> {
        let mut n = self.local_namer(reserved);
        vars.iter().map(|v| n.fresh(&v.name)).collect()
    }

    /// `value_sets::NAME` of parser value set `vs`.
    pub(super) fn value_set_path(&self, vs: u32) -> String {
        let index = self
            .prog
            .value_set_index
            .get(vs as usize)
            .copied()
            .unwrap_or(vs);
        format!(
            "value_sets::{}",
            self.names.objects.value_sets.index[index as usize]
        )
    }

    /// Whether function `h` uses the switch's hash units, random source or
    /// extern objects (registers, counters, meters), itself or through a
    /// function it calls: such a function takes the runtime as its first
    /// parameter (`rt`), and every call passes it on.
    pub(super) fn function_uses_runtime(&self, h: Handle<Function>) -> bool {
        self.function_calls(h, &|b| {
            matches!(
                b,
                Builtin::Hash { .. }
                    | Builtin::Random { .. }
                    | Builtin::RegisterRead { .. }
                    | Builtin::RegisterWrite { .. }
                    | Builtin::CounterCount { .. }
                    | Builtin::MeterExecute { .. }
            )
        })
    }

    /// Whether function `h` (or one it calls) counts or meters a packet:
    /// such a function takes the packet's environment (`env`) after `rt`.
    pub(super) fn function_uses_env(&self, h: Handle<Function>) -> bool {
        self.function_calls(h, &|b| {
            matches!(
                b,
                Builtin::CounterCount { .. } | Builtin::MeterExecute { .. }
            )
        })
    }

    /// Whether function `h` (or one it calls) calls a user-defined extern:
    /// such a function is generic over the implementation and takes the
    /// extern objects (`ext__`) after `rt` and `env`.
    pub(super) fn function_uses_user_externs(&self, h: Handle<Function>) -> bool {
        self.function_calls(h, &|b| {
            matches!(b, Builtin::UserMethod { .. } | Builtin::UserFunction { .. })
        })
    }

    /// Whether function `h` makes a built-in call that `wanted` picks,
    /// itself or through a function it calls (P4 has no recursion, so the
    /// walk ends).
    fn function_calls(&self, h: Handle<Function>, wanted: &dyn Fn(&Builtin) -> bool) -> bool {
        fn calls_in_expr<'a>(e: &'a Expr, out: &mut Vec<&'a Call>) {
            if let ExprKind::Call(c) = &e.kind {
                calls_in_call(c, out);
            }
            visit::each_operand(e, |o| calls_in_expr(o, out));
        }
        fn calls_in_call<'a>(c: &'a Call, out: &mut Vec<&'a Call>) {
            out.push(c);
            if let Call::Action(_, args)
            | Call::Function(_, args)
            | Call::ControlApply(_, args)
            | Call::ParserApply(_, args) = c
            {
                args.iter().for_each(|a| calls_in_expr(a, out));
            }
        }
        fn calls_in_block<'a>(b: &'a Block, out: &mut Vec<&'a Call>) {
            for s in b {
                match s {
                    Stmt::Assign(l, r, _) => {
                        calls_in_expr(l, out);
                        calls_in_expr(r, out);
                    }
                    Stmt::Decl(_, Some(e)) | Stmt::Return(Some(e)) => calls_in_expr(e, out),
                    Stmt::If(c, t, e) => {
                        calls_in_expr(c, out);
                        calls_in_block(t, out);
                        if let Some(e) = e {
                            calls_in_block(e, out);
                        }
                    }
                    Stmt::Block(b) => calls_in_block(b, out),
                    Stmt::Switch(e, cases) => {
                        calls_in_expr(e, out);
                        for b in cases.iter().filter_map(|c| c.body.as_ref()) {
                            calls_in_block(b, out);
                        }
                    }
                    Stmt::SwitchAction(_, cases) => {
                        for b in cases.iter().filter_map(|c| c.body.as_ref()) {
                            calls_in_block(b, out);
                        }
                    }
                    Stmt::Call(c, _) => calls_in_call(c, out),
                    Stmt::For { cond, update, body } => {
                        if let Some(c) = cond {
                            calls_in_expr(c, out);
                        }
                        calls_in_block(update, out);
                        calls_in_block(body, out);
                    }
                    Stmt::ForRange { lo, hi, body, .. } => {
                        calls_in_expr(lo, out);
                        calls_in_expr(hi, out);
                        calls_in_block(body, out);
                    }
                    Stmt::ForStack { stack, body, .. } => {
                        calls_in_expr(stack, out);
                        calls_in_block(body, out);
                    }
                    Stmt::Decl(_, None)
                    | Stmt::Return(None)
                    | Stmt::Exit
                    | Stmt::Break
                    | Stmt::Continue => {}
                }
            }
        }
        let mut calls = Vec::new();
        calls_in_block(&self.prog.functions[h].body, &mut calls);
        calls.into_iter().any(|c| match c {
            Call::Builtin(b) => wanted(b),
            Call::Function(g, _) => self.function_calls(*g, wanted),
            _ => false,
        })
    }

    pub(super) fn function(&mut self, h: Handle<Function>) -> Result<(), BackError> {
        let f = &self.prog.functions[h];
        let names = self.var_names(&f.vars, &["rt", "env", "l"]);
        let ctx = Ctx {
            kind: BodyKind::Function,
            vars: &f.vars,
            var_names: names.clone(),
            block_params: vec![],
            block_locals: vec![],
            inst: None,
            externs: Some(self.info.layout.functions[h.index()].clone()),
            pass: String::new(),
            tmp: Default::default(),
        };
        let mut params = Vec::new();
        if self.function_uses_runtime(h) {
            params.push("rt: &mut ::p4_target::runtime::Runtime".to_string());
        }
        if self.function_uses_env(h) {
            params.push("env: &mut Env<'_>".to_string());
        }
        let mut generics = String::new();
        if let Some(u) = &self.names.user
            && self.function_uses_user_externs(h)
        {
            generics = format!("<{}: {}>", u.param, u.externs);
            params.push(format!(
                "{}: &mut {}<{}>",
                user_externs::EXT,
                u.objects,
                u.param
            ));
        }
        for (v, n) in f.vars[..f.n_params as usize].iter().zip(&names) {
            let t = self.rust_ty(&v.ty)?;
            params.push(match v.param {
                Some(Direction::Out | Direction::InOut) => format!("{n}: &mut {t}"),
                _ => format!("mut {n}: {t}"),
            });
        }
        let ret = match &f.ret {
            Ty::Void => String::new(),
            t => format!(" -> {}", self.rust_ty(t)?),
        };
        self.w.line(format!("/// P4 function `{}`.", f.name));
        self.w.open(format!(
            "fn {}{generics}({}){ret} {{",
            self.names.functions[h.index()],
            params.join(", ")
        ));
        self.block(&ctx, &f.body)?;
        self.w.close("}");
        self.w.line("");
        Ok(())
    }

    pub(super) fn locals_struct(&mut self, h: Handle<Control>) -> Result<(), BackError> {
        let c = &self.prog.controls[h];
        let name = self.names.locals_structs[h.index()].clone();
        let names = self.var_names(&c.locals, &[]);
        self.w
            .line(format!("/// Control-level variables of `{}`.", c.name));
        self.w.line("#[derive(Clone, Copy, Debug, Default)]");
        self.w.open(format!("pub struct {name} {{"));
        for (v, n) in c.locals.iter().zip(&names) {
            let t = self.rust_ty(&v.ty)?;
            self.w.line(format!("pub {n}: {t},"));
        }
        self.w.close("}");
        self.w.line("");
        Ok(())
    }

    /// Parameter list of every function of a control instance, and the
    /// argument list that passes them on.
    pub(super) fn block_sig(
        &self,
        c: &Control,
        names: &[String],
    ) -> Result<(String, String), BackError> {
        let mut sig = vec![
            "rt: &mut ::p4_target::runtime::Runtime".to_string(),
            "env: &mut Env<'_>".to_string(),
        ];
        let mut pass = vec!["rt".to_string(), "env".to_string()];
        if let Some(u) = &self.names.user {
            sig.push(format!(
                "{}: &mut {}<{}>",
                user_externs::EXT,
                u.objects,
                u.param
            ));
            pass.push(user_externs::EXT.to_string());
        }
        for (p, n) in c.params.iter().zip(names) {
            match &p.ty {
                Some(t) => sig.push(format!("{n}: &mut {}", self.rust_ty(t)?)),
                None => sig.push(format!("{n}: &mut PacketOut<'_>")),
            }
            pass.push(n.clone());
        }
        Ok((sig.join(", "), pass.join(", ")))
    }

    pub(super) fn instance(&mut self, i: usize) -> Result<(), BackError> {
        let inst = self.prog.instances[i].clone();
        let c = &self.prog.controls[inst.control];
        let mut pn = self.local_namer(&["rt", "env", "l"]);
        let mut param_names: Vec<String> = Vec::new();
        for p in &c.params {
            if p.ty.is_none() {
                // packet_out: the emit code uses this fixed name.
                param_names.push("packet__".into());
            } else {
                param_names.push(pn.fresh(&p.name));
            }
        }
        let local_names = self.var_names(&c.locals, &[]);
        let (sig, pass) = self.block_sig(c, &param_names)?;
        let locals_ty = self.names.locals_structs[inst.control.index()].clone();
        let pass_l = format!("{pass}, l");
        let sig_l = format!("{sig}, l: &mut {locals_ty}");

        // Actions.
        for (a, fname) in self.names.inst_actions[i].clone() {
            let act = &self.prog.actions[a];
            let reserved: Vec<&str> = ["rt", "env", "l"]
                .into_iter()
                .chain(param_names.iter().map(|s| s.as_str()))
                .collect();
            let names = self.var_names(&act.vars, &reserved);
            let mut params = vec![sig_l.clone()];
            for (v, n) in act.vars[..act.n_params as usize].iter().zip(&names) {
                let t = self.rust_ty(&v.ty)?;
                params.push(match v.param {
                    Some(Direction::Out | Direction::InOut) => format!("{n}: &mut {t}"),
                    _ => format!("mut {n}: {t}"),
                });
            }
            let ctx = Ctx {
                kind: BodyKind::Control,
                vars: &act.vars,
                var_names: names,
                block_params: param_names.clone(),
                block_locals: local_names.clone(),
                inst: Some(i),
                // A top-level action's extern instances are its own.
                externs: act
                    .control
                    .is_none()
                    .then(|| self.info.layout.actions[a.index()].clone()),
                pass: pass_l.clone(),
                tmp: Default::default(),
            };
            self.w
                .line(format!("/// Action `{}` of `{}`.", act.p4_name, inst.path));
            self.w.line("#[inline]");
            self.w.open(format!(
                "fn {fname}{}({}) -> Result<(), Exit> {{",
                self.fn_generics(),
                params.join(", ")
            ));
            self.block(&ctx, &act.body)?;
            self.w.line("Ok(())");
            self.w.close("}");
            self.w.line("");
        }

        // Tables.
        for (ti, t) in c.tables.iter().enumerate() {
            let table = &self.prog.tables[*t];
            let fname = self.names.inst_tables[i][ti].clone();
            let rt_index = self
                .names
                .objects
                .table(self.info.layout.instances[i].tables[ti] as usize);
            let ctx = Ctx {
                kind: BodyKind::Control,
                vars: &[],
                var_names: vec![],
                block_params: param_names.clone(),
                block_locals: local_names.clone(),
                inst: Some(i),
                externs: None,
                pass: pass_l.clone(),
                tmp: Default::default(),
            };
            let max_params = table
                .actions
                .iter()
                .map(|a| self.prog.actions[*a].data_params().len())
                .max()
                .unwrap_or(0);
            self.w
                .line(format!("/// Table `{}.{}`.", inst.path, table.name));
            self.w.line("#[inline]");
            self.w.open(format!(
                "fn {fname}{}({sig_l}) -> Result<ApplyResult, Exit> {{",
                self.fn_generics()
            ));
            let mut keys = Vec::new();
            let mut sel = Vec::new();
            for k in &table.keys {
                if self.is_wide(&k.expr.ty) {
                    return self.refuse_wide("a table key", Some(k.expr.span));
                }
                let v = self.expr(&ctx, &k.expr)?;
                let v = if self.is_bits(&k.expr.ty) {
                    v
                } else {
                    // bool, error, enum
                    format!("({v} as u128)")
                };
                match k.kind {
                    KeyKind::Match(_) => keys.push(v),
                    KeyKind::Selector => sel.push(k.expr.clone()),
                }
            }
            // The key is built only for a lookup (an empty table misses
            // without one) and for the trace: a closure, when evaluating
            // the key expressions twice is harmless (no calls in them).
            let pure_key = table.keys.iter().all(|k| !has_call(&k.expr));
            let key_ty = format!("[u128; {}]", keys.len());
            if pure_key {
                self.w.line(format!(
                    "let key__ = || -> {key_ty} {{ [{}] }};",
                    keys.join(", ")
                ));
            } else {
                self.w
                    .line(format!("let key__: {key_ty} = [{}];", keys.join(", ")));
            }
            let profile = table.implementation.map(|e| {
                (
                    self.names
                        .objects
                        .profile(self.info.layout.instances[i].externs[e as usize] as usize),
                    c.externs[e as usize].kind.clone(),
                )
            });
            // The selector hash: computed only when a group is hit, unless
            // it draws from the runtime's seeded generator (`random`),
            // which must happen before the lookup borrows the runtime.
            let mut sel_hash: Vec<String> = Vec::new();
            if let Some((_, ExternKind::ActionSelector(algo, _, _))) = &profile {
                let a = info::algo(*algo);
                let h = match self.pack_bytes(&ctx, &sel, &mut sel_hash)? {
                    Some(hb) => format!("::p4_target::externs::hash_bytes({a}, &{hb})"),
                    None => {
                        let bp = self.pack(&ctx, &sel, &mut sel_hash)?;
                        format!("::p4_target::externs::hash({a}, &{bp})")
                    }
                };
                if *algo == p4_target::info::HashAlgorithm::Random {
                    for p in sel_hash.drain(..) {
                        self.w.line(p);
                    }
                    self.w
                        .line("let sel_hash__ = rt.hash_bytes(::p4_target::info::HashAlgorithm::Random, &[]);");
                } else {
                    sel_hash.push(format!("let sel_hash__ = {h};"));
                }
            }
            self.w.line(format!("let mut p__ = [0u128; {max_params}];"));
            let packed = if pure_key {
                let table_info =
                    &self.info.tables[self.info.layout.instances[i].tables[ti] as usize];
                packed_key(table_info, &keys)
            } else {
                None
            };
            let table_info = &self.info.tables[self.info.layout.instances[i].tables[ti] as usize];
            // Where each action's arguments sit in the table's action words.
            let mut inline = Vec::new();
            for a in &table.actions {
                let id = self.info.layout.action_ids[a.index()];
                if let Some((tag, offsets)) = word_layout(self.info, table_info, id)
                    && offsets.len() == self.prog.actions[*a].data_params().len()
                {
                    inline.push((tag, id, offsets));
                }
            }
            self.w.open("let (hit__, aid__, entry__) = 'lookup__: {");
            self.w
                .line(format!("let table__ = &mut rt.tables[{rt_index}];"));
            if pure_key {
                self.w.open("let r__ = if table__.is_empty() {");
                self.w.line("table__.miss_word()");
                self.w.reopen("} else {");
                match &packed {
                    Some(k) => {
                        self.w.line(format!("let packed__: u128 = {k};"));
                        self.w
                            .line("table__.lookup_packed_word(packed__, env.packet_length)");
                    }
                    None => self
                        .w
                        .line("table__.lookup_word(&key__(), env.packet_length)"),
                }
                self.w.close("};");
            } else {
                self.w
                    .line("let r__ = table__.lookup_word(&key__, env.packet_length);");
            }
            // The action in the word: its arguments taken out by shifts;
            // any other, from the table (`NOT_INLINE`) or the profile.
            // A group's pick as a word, where the selector keeps words laid
            // out as this table's (its first table's actions, in order).
            let group_words = table.implementation.and_then(|e| {
                let index = self.info.layout.instances[i].externs[e as usize] as usize;
                let profile = self.info.action_profiles.get(index)?;
                let first = self
                    .info
                    .tables
                    .iter()
                    .find(|t| profile.table_ids.first() == Some(&t.id))?;
                let ids = |t: &TableInfo| t.actions.iter().map(|a| a.id).collect::<Vec<_>>();
                (profile.selector.is_some() && ids(first) == ids(table_info))
                    .then(|| self.names.objects.profile(index))
            });
            match &group_words {
                Some(pi) => {
                    self.w.line("let mut w__ = r__.word;");
                    self.w
                        .open("if w__ as u8 == ::p4_target::table::word::GROUP {");
                    for l in &sel_hash {
                        self.w.line(l);
                    }
                    self.w.line(format!(
                        "let picked__ = rt.profiles[{pi}].select_word((w__ >> ::p4_target::table::word::TAG_BITS) as u32, sel_hash__);"
                    ));
                    self.w
                        .open("if picked__ as u8 != ::p4_target::table::word::NOT_INLINE {");
                    self.w.line("w__ = picked__;");
                    self.w.close("}");
                    self.w.close("}");
                }
                None => self.w.line("let w__ = r__.word;"),
            }
            self.w
                .open("let call__: Option<&::p4_target::runtime::ActionCall> = match w__ as u8 {");
            for (tag, id, offsets) in &inline {
                self.w.open(format!("{tag:#x} => {{"));
                for (j, (off, width)) in offsets.iter().enumerate() {
                    self.w.line(format!(
                        "p__[{j}] = (w__ >> {off}) & {:#x};",
                        p4_target::bits::mask(*width)
                    ));
                }
                self.w
                    .line(format!("break 'lookup__ (r__.hit, {id:#x}, r__.entry);"));
                self.w.close("}");
            }
            let member = "::p4_target::table::word::MEMBER";
            let group = "::p4_target::table::word::GROUP";
            let payload = "(w__ >> ::p4_target::table::word::TAG_BITS) as u32";
            if let Some((pi, kind)) = &profile {
                self.w
                    .line(format!("{member} => rt.profiles[{pi}].member({payload}),"));
                if matches!(kind, ExternKind::ActionSelector(..)) {
                    self.select_arm(group, payload, pi, &sel_hash);
                } else {
                    self.w.line(format!("{group} => None,"));
                }
            }
            self.w.open("_ => match table__.action_of(r__.entry) {");
            self.w
                .line("::p4_target::runtime::EntryAction::Direct(c__) => Some(c__),");
            match &profile {
                Some((pi, kind)) => {
                    self.w.line(format!(
                        "::p4_target::runtime::EntryAction::Member(m__) => rt.profiles[{pi}].member(*m__),"
                    ));
                    if matches!(kind, ExternKind::ActionSelector(..)) {
                        self.select_arm(
                            "::p4_target::runtime::EntryAction::Group(g__)",
                            "*g__",
                            pi,
                            &sel_hash,
                        );
                    } else {
                        self.w
                            .line("::p4_target::runtime::EntryAction::Group(_) => None,");
                    }
                }
                None => self.w.line("_ => None,"),
            }
            self.w.close("},");
            self.w.close("};");
            self.w.open("match call__ {");
            self.w.open("Some(c__) => {");
            // One load per parameter: a slice copy of run-time length
            // would be a `memcpy` call on every hit.
            for j in 0..max_params {
                self.w.line(format!(
                    "if let Some(v__) = c__.params.get({j}) {{ p__[{j}] = *v__; }}"
                ));
            }
            self.w.line("(r__.hit, c__.action_id, r__.entry)");
            self.w.close("}");
            self.w.line("None => (r__.hit, 0, r__.entry),");
            self.w.close("}");
            self.w.close("};");
            self.trace_table(&rt_index, pure_key);
            if table.direct_meter.is_some() {
                self.w.line("env.entry = entry__;");
            }
            self.w.open("match aid__ {");
            for (ai, a) in table.actions.iter().enumerate() {
                let act = &self.prog.actions[*a];
                // Directional parameters take the arguments bound in the
                // actions list, copied in and out.
                let params: Vec<(Direction, Ty)> = act.vars[..act.n_directional as usize]
                    .iter()
                    .map(|v| (v.param.unwrap_or(Direction::In), v.ty.clone()))
                    .collect();
                let no_bound = Vec::new();
                let bound = table.bound.get(ai).unwrap_or(&no_bound);
                let (pre, list, post) = self.args(&ctx, &params, bound)?;
                let mut args = vec![pass_l.clone()];
                args.extend(list);
                for (j, v) in act.data_params().iter().enumerate() {
                    args.push(match &v.ty {
                        Ty::Bool => format!("p__[{j}] != 0"),
                        t if self.is_wide(t) => {
                            return self.refuse_wide(
                                &format!(
                                    "a table (`{}`) whose action parameter `{}` (set by the control plane) is",
                                    table.name, v.name
                                ),
                                Some(table.span),
                            );
                        }
                        t => self.to_native(&format!("p__[{j}]"), t)?,
                    });
                }
                let call = format!(
                    "{}{}({})",
                    self.action_fn(i, *a)?,
                    self.fn_turbofish(),
                    args.join(", ")
                );
                self.w.line(format!(
                    "{:#x} => {},",
                    self.info.layout.action_ids[a.index()],
                    Self::wrap_call(pre, call, post, "?")
                ));
            }
            self.w.line("_ => {}");
            self.w.close("}");
            self.w
                .line("Ok(ApplyResult { hit: hit__, action_run: aid__ })");
            self.w.close("}");
            self.w.line("");
        }

        // Apply.
        let reserved: Vec<&str> = ["rt", "env", "l", "l_storage"]
            .into_iter()
            .chain(param_names.iter().map(|s| s.as_str()))
            .collect();
        let names = self.var_names(&c.apply_vars, &reserved);
        let ctx = Ctx {
            kind: BodyKind::Control,
            vars: &c.apply_vars,
            var_names: names,
            block_params: param_names.clone(),
            block_locals: local_names.clone(),
            inst: Some(i),
            externs: None,
            pass: pass_l.clone(),
            tmp: Default::default(),
        };
        self.w.line(format!("/// `{}.apply`.", inst.path));
        self.w.line("#[inline]");
        self.w.open(format!(
            "pub fn {}{}({sig}) -> Result<(), Exit> {{",
            self.names.inst_apply[i],
            self.fn_generics()
        ));
        self.w
            .line(format!("let mut l_storage = {locals_ty}::default();"));
        self.w.line("let l = &mut l_storage;");
        for (li, init) in &c.local_inits {
            let v = self.expr(&ctx, init)?;
            let v = self.to_native(&v, &init.ty)?;
            self.w
                .line(format!("l.{} = {v};", local_names[*li as usize]));
        }
        let apply = c.apply.clone();
        self.block(&ctx, &apply)?;
        self.w.line("Ok(())");
        self.w.close("}");
        self.w.line("");
        Ok(())
    }
}

impl Gen<'_> {
    /// The match arm `pattern` of a table's action lookup that picks a
    /// member of group `group_id` by the selector hash (computed in the
    /// arm, unless `sel_hash` is empty: then before the lookup).
    fn select_arm(&mut self, pattern: &str, group_id: &str, profile: &str, sel_hash: &[String]) {
        if sel_hash.is_empty() {
            self.w.line(format!(
                "{pattern} => rt.profiles[{profile}].select({group_id}, sel_hash__),"
            ));
        } else {
            self.w.open(format!("{pattern} => {{"));
            for l in sel_hash {
                self.w.line(l);
            }
            self.w.line(format!(
                "rt.profiles[{profile}].select({group_id}, sel_hash__)"
            ));
            self.w.close("}");
        }
    }
}

/// The tag and the arguments' (offset, width) of action `action_id` in the
/// action words of `table` (`p4_target::table::word`), from the same
/// P4Info the table reads; `None` when it has none.
fn word_layout(
    info: &ProgramInfo,
    table: &TableInfo,
    action_id: u32,
) -> Option<(u8, Vec<(u32, u32)>)> {
    let position = table.actions.iter().position(|a| a.id == action_id)?;
    let action = info.actions.iter().find(|a| a.id == action_id)?;
    let widths: Vec<u32> = action.params.iter().map(|p| p.bitwidth).collect();
    p4_target::table::word::action_layout(position, &widths)
}

/// The key of a table the exact or LPM engine serves (fields all exact, or
/// exact and one LPM; at most 128 bits), packed as
/// `Table::lookup_packed` takes it: the values in key order, each masked
/// to its width, the first highest. `None` for any other table, which
/// passes its key as a slice.
fn packed_key(table: &TableInfo, values: &[String]) -> Option<String> {
    let lpm = table
        .keys
        .iter()
        .filter(|k| k.kind == MatchKind::Lpm)
        .count();
    let served = table.keys.iter().all(|k| {
        matches!(k.kind, MatchKind::Exact | MatchKind::Lpm) && (1..=128).contains(&k.bitwidth)
    });
    let bits: u32 = table.keys.iter().map(|k| k.bitwidth).sum();
    if values.is_empty() || values.len() != table.keys.len() || !served || lpm > 1 || bits > 128 {
        return None;
    }
    let mut below = bits;
    let parts: Vec<String> = table
        .keys
        .iter()
        .zip(values)
        .map(|(k, v)| {
            below -= k.bitwidth;
            let masked = if k.bitwidth == 128 {
                v.clone()
            } else {
                format!("({v} & {:#x})", p4_target::bits::mask(k.bitwidth))
            };
            if below == 0 {
                masked
            } else {
                format!("({masked} << {below})")
            }
        })
        .collect();
    Some(parts.join(" | "))
}

pub(super) use crate::ir::visit::has_call;
