//! Parsers (P4_16 §12): a loop over a state enum, bounded by
//! `PARSER_MAX_STEPS`, returning `Err(error_code)`.

use super::*;

impl Gen<'_> {
    pub(super) fn parser(&mut self, h: Handle<Parser>) -> Result<(), BackError> {
        let p = &self.prog.parsers[h];
        let mut pn = self.local_namer(&["rt", "env", "state", "packet__"]);
        let mut param_names = Vec::new();
        let mut sig = vec![
            "rt: &mut ::p4_target::runtime::Runtime".to_string(),
            "env: &mut Env<'_>".to_string(),
        ];
        if let Some(u) = &self.names.user {
            sig.push(format!(
                "{}: &mut {}<{}>",
                user_externs::EXT,
                u.objects,
                u.param
            ));
        }
        for prm in &p.params {
            match &prm.ty {
                None => {
                    param_names.push("packet__".to_string());
                    sig.push("packet__: &mut PacketIn<'_>".into());
                }
                Some(t) => {
                    let n = pn.fresh(&prm.name);
                    sig.push(format!("{n}: &mut {}", self.rust_ty(t)?));
                    param_names.push(n);
                }
            }
        }
        let reserved: Vec<&str> = ["rt", "env", "state", "packet__"]
            .into_iter()
            .chain(param_names.iter().map(|s| s.as_str()))
            .collect();
        let names = self.var_names(&p.locals, &reserved);
        let ctx = Ctx {
            kind: BodyKind::Parser,
            vars: &p.locals,
            var_names: names.clone(),
            block_params: param_names.clone(),
            block_locals: vec![],
            inst: None,
            pass: String::new(),
            tmp: Default::default(),
        };
        let mut sn = Namer::default();
        let state_names: Vec<String> = p.states.iter().map(|s| sn.fresh(&s.name)).collect();
        let enum_name = format!("{}_State", self.names.parsers[h.index()]);
        self.w.line(format!("/// States of parser `{}`.", p.name));
        self.w.line(ALLOW);
        self.w.line("#[derive(Clone, Copy, Debug, PartialEq, Eq)]");
        self.w.open(format!("enum {enum_name} {{"));
        for n in &state_names {
            self.w.line(format!("{n},"));
        }
        self.w.close("}");
        self.w.line("");
        self.w.line(format!(
            "/// Parser `{}`: `Err` carries the parser error code.",
            p.name
        ));
        self.w.line(ALLOW);
        self.w.open(format!(
            "pub fn {}{}({}) -> Result<(), u32> {{",
            self.names.parsers[h.index()],
            self.ext_generics(),
            sig.join(", ")
        ));
        for (v, n) in p.locals.iter().zip(&names) {
            let t = self.rust_ty(&v.ty)?;
            self.w.line(format!(
                "let mut {n}: {t} = {};",
                self.default_value(&v.ty)?
            ));
        }
        for (li, init) in &p.local_inits {
            let v = self.expr(&ctx, init)?;
            let v = self.to_native(&v, &init.ty)?;
            self.w.line(format!("{} = {v};", names[*li as usize]));
        }
        if p.states.is_empty() {
            self.w.line("return Ok(());");
            self.w.close("}");
            return Ok(());
        }
        let target = |t: &Target| -> String {
            match t {
                Target::State(i) => format!("state = {enum_name}::{};", state_names[*i as usize]),
                Target::Accept => "return Ok(());".into(),
                Target::Reject => "return Err(::p4_target::v1model::error_code::NO_ERROR);".into(),
            }
        };
        self.w
            .line(format!("let mut state = {enum_name}::{};", state_names[0]));
        self.w.line("let mut steps__: u32 = 0;");
        self.w.open("loop {");
        // A state graph with a cycle that extracts nothing would spin
        // forever; v1model reports ParserTimeout instead.
        self.w.line("steps__ += 1;");
        self.w.open(format!("if steps__ > {PARSER_MAX_STEPS} {{"));
        self.w
            .line("return Err(::p4_target::v1model::error_code::PARSER_TIMEOUT);");
        self.w.close("}");
        self.w.open("match state {");
        for (si, st) in p.states.iter().enumerate() {
            self.w
                .open(format!("{enum_name}::{} => {{", state_names[si]));
            let pname = p.name.clone();
            self.trace_parser_state(&pname, &st.name);
            let body = st.body.clone();
            self.block(&ctx, &body)?;
            match &st.transition {
                Transition::Goto(t) => self.w.line(target(t)),
                Transition::Select(exprs, cases) => {
                    let mut key_names = Vec::new();
                    for (k, e) in exprs.iter().enumerate() {
                        if self.is_wide(&e.ty) {
                            return self.refuse_wide("a select expression", Some(e.span));
                        }
                        let v = self.expr(&ctx, e)?;
                        let v = if e.ty == Ty::Bool {
                            format!("({v} as u128)")
                        } else {
                            v
                        };
                        let v = if matches!(e.ty, Ty::Error | Ty::Enum(_)) {
                            format!("({v} as u128)")
                        } else {
                            v
                        };
                        let n = format!("k{k}__");
                        self.w.line(format!("let {n}: u128 = {v};"));
                        key_names.push(n);
                    }
                    let mut first = true;
                    for c in cases {
                        let mut conds = Vec::new();
                        for (ks, k) in c.keys.iter().zip(&key_names) {
                            match ks {
                                KeySet::Any => {}
                                KeySet::Value(v) => conds.push(format!("{k} == {}", lit(*v))),
                                KeySet::Mask(v, m) => {
                                    conds.push(format!("{k} & {} == {}", lit(*m), lit(v & m)))
                                }
                                KeySet::Range(lo, hi) if *lo == 0 => {
                                    conds.push(format!("{k} <= {}", lit(*hi)))
                                }
                                KeySet::Range(lo, hi) => conds.push(format!(
                                    "({} <= {k} && {k} <= {})",
                                    lit(*lo),
                                    lit(*hi)
                                )),
                                KeySet::ValueSet(vs) => conds.push(format!(
                                    "rt.value_sets[{}].contains({k})",
                                    self.value_set_path(*vs)
                                )),
                                KeySet::ValueSetAll(vs) => {
                                    let mut cat = String::from("0u128");
                                    for (e, kn) in exprs.iter().zip(&key_names) {
                                        let w = match &e.ty {
                                            Ty::Bool => 1,
                                            Ty::Error | Ty::Enum(_) => 32,
                                            t => self.width(t),
                                        };
                                        cat = format!("{BITS}::concat({cat}, {kn}, {w})");
                                    }
                                    conds.push(format!(
                                        "rt.value_sets[{}].contains({cat})",
                                        self.value_set_path(*vs)
                                    ));
                                }
                            }
                        }
                        // Value sets with several keys take the concatenation.
                        let cond = if conds.is_empty() {
                            "true".to_string()
                        } else {
                            conds.join(" && ")
                        };
                        let kw = if first { "if" } else { "} else if" };
                        if first {
                            self.w.open(format!("{kw} {cond} {{"));
                        } else {
                            self.w.reopen(format!("{kw} {cond} {{"));
                        }
                        first = false;
                        self.w.line(target(&c.target));
                    }
                    if first {
                        self.w
                            .line("return Err(::p4_target::v1model::error_code::NO_MATCH);");
                    } else {
                        self.w.reopen("} else {");
                        self.w
                            .line("return Err(::p4_target::v1model::error_code::NO_MATCH);");
                        self.w.close("}");
                    }
                }
            }
            self.w.close("}");
        }
        self.w.close("}");
        self.w.close("}");
        self.w.close("}");
        self.w.line("");
        Ok(())
    }
}
