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
            externs: Some(self.info.layout.parsers[h.index()].clone()),
            pass: String::new(),
            tmp: Default::default(),
        };
        let mut sn = Namer::default();
        let state_names: Vec<String> = p.states.iter().map(|s| sn.fresh(&s.name)).collect();
        let enum_name = format!("{}_State", self.names.parsers[h.index()]);
        self.w.line(format!("/// States of parser `{}`.", p.name));
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
        self.w.line("#[inline]");
        self.w.open(format!(
            "pub fn {}{}({}) -> Result<(), u32> {{",
            self.names.parsers[h.index()],
            self.fn_generics(),
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
        // A cycle of states that extracts nothing would spin forever;
        // v1model reports ParserTimeout instead. Only states on a cycle
        // count their visits: the others run at most once a packet.
        let cyclic = cyclic_states(p);
        self.w
            .line(format!("let mut state = {enum_name}::{};", state_names[0]));
        if cyclic.iter().any(|&c| c) {
            self.w.line("let mut steps__: u32 = 0;");
        }
        self.w.open("loop {");
        self.w.open("match state {");
        for (si, st) in p.states.iter().enumerate() {
            self.w
                .open(format!("{enum_name}::{} => {{", state_names[si]));
            if cyclic[si] {
                self.w.line("steps__ += 1;");
                self.w.open(format!("if steps__ > {PARSER_MAX_STEPS} {{"));
                self.w
                    .line("return Err(::p4_target::v1model::error_code::PARSER_TIMEOUT);");
                self.w.close("}");
            }
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
                    let mut caught_all = false;
                    // The sign bit of each int<W> key: a range over one
                    // holds signed values (P4_16 §8.15.3), compared here
                    // with the sign bit flipped on both sides, which maps
                    // signed order onto unsigned order.
                    let sign_bits: Vec<Option<u128>> = exprs
                        .iter()
                        .map(|e| {
                            (e.ty.is_signed(self.prog) && self.width(&e.ty) > 0)
                                .then(|| 1u128 << (self.width(&e.ty) - 1))
                        })
                        .collect();
                    for c in cases {
                        let mut conds = Vec::new();
                        for ((ks, k), sign) in c.keys.iter().zip(&key_names).zip(&sign_bits) {
                            if let (KeySet::Range(lo, hi), Some(s)) = (ks, sign) {
                                conds.push(format!(
                                    "({} <= ({k} ^ {}) && ({k} ^ {}) <= {})",
                                    lit(lo ^ s),
                                    lit(*s),
                                    lit(*s),
                                    lit(hi ^ s)
                                ));
                                continue;
                            }
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
                        if conds.is_empty() {
                            // Matches whatever is left: later cases never run.
                            if first {
                                self.w.line(target(&c.target));
                            } else {
                                self.w.reopen("} else {");
                                self.w.line(target(&c.target));
                                self.w.close("}");
                            }
                            caught_all = true;
                            break;
                        }
                        let cond = conds.join(" && ");
                        if first {
                            self.w.open(format!("if {cond} {{"));
                        } else {
                            self.w.reopen(format!("}} else if {cond} {{"));
                        }
                        first = false;
                        self.w.line(target(&c.target));
                    }
                    const NO_MATCH: &str =
                        "return Err(::p4_target::v1model::error_code::NO_MATCH);";
                    if caught_all {
                        // The default case closed the chain.
                    } else if first {
                        self.w.line(NO_MATCH);
                    } else {
                        self.w.reopen("} else {");
                        self.w.line(NO_MATCH);
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

/// Per state of `p`, whether it lies on a cycle of transitions (can reach
/// itself).
fn cyclic_states(p: &Parser) -> Vec<bool> {
    let succ = |i: usize| -> Vec<usize> {
        let mut out = Vec::new();
        let mut add = |t: &Target| {
            if let Target::State(j) = t {
                out.push(*j as usize);
            }
        };
        match &p.states[i].transition {
            Transition::Goto(t) => add(t),
            Transition::Select(_, cases) => cases.iter().for_each(|c| add(&c.target)),
        }
        out
    };
    (0..p.states.len())
        .map(|start| {
            let mut seen = vec![false; p.states.len()];
            let mut todo = succ(start);
            while let Some(i) = todo.pop() {
                if i == start {
                    return true;
                }
                if i < seen.len() && !seen[i] {
                    seen[i] = true;
                    todo.extend(succ(i));
                }
            }
            false
        })
        .collect()
}
