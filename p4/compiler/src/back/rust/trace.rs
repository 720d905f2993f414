//! Trace points (issue #16): the statements generated code runs to record a
//! traced packet's parser states, extracted headers, tables and extern
//! calls into `rt.trace` (`p4_target::trace::Tracer`).
//!
//! Every point is `if TRACE { .. }` around a call to a `#[cold]` function,
//! `TRACE` being a const generic parameter of the generated functions that
//! each stage entry point sets from `rt.trace.on` once: a packet that is
//! not traced pays one branch per stage and runs the code the
//! `--no-trace-points` build would. All trace emission lives here so that the other
//! back-end modules only call these helpers; with
//! [`super::RustOptions::trace_points`] off they write nothing (the
//! `trace_extract` methods of headers stay, unused).

use super::*;

/// The test every trace point starts with: every function that takes the
/// runtime has a `const TRACE: bool` parameter, and each stage entry point
/// runs the `TRACE = true` instance only for a packet being traced. An
/// untraced packet runs code without trace points at all (the optimiser
/// drops them), at the price of a second copy of the generated code.
const ON: &str = "if TRACE {";

impl Gen<'_> {
    /// `trace_extract`, a method of every header struct: records the
    /// header's fixed-width fields.
    pub(super) fn header_trace_impl(&mut self, h: Handle<Composite>) -> Result<(), BackError> {
        let c = &self.prog.composites[h];
        let name = &self.names.composites[h.index()];
        let undecoded = self.undecoded_leaves(h);
        let mut items = Vec::new();
        let mut off = 0;
        for (path, ty) in c.leaves(self.prog) {
            let ident = super::headers::leaf_ident(&path);
            let width = ty.scalar_width(self.prog).unwrap_or(0);
            off += width;
            if undecoded.contains(&ident) && width > 0 {
                // Read where it was extracted: its low 128 bits.
                let (bit, width) = (off - width.min(128), width.min(128));
                items.push(format!(
                    "({:?}, self.wire__.read_bits(data, Self::BYTES, {bit}, {width}))",
                    path.join(".")
                ));
                continue;
            }
            let v = match &ty {
                // The trace records u128 values: a wide field shows its
                // low 128 bits.
                t if self.is_wide(t) => format!("self.{ident}.low_u128()"),
                Ty::Bool => format!("u128::from(self.{ident})"),
                Ty::Int(w) => format!("(self.{ident} as u128) & {BITS}::mask({w})"),
                Ty::Varbit(_) => continue,
                _ => format!("self.{ident} as u128"),
            };
            items.push(format!("({:?}, {v})", path.join(".")));
        }
        let w = &mut self.w;
        w.open(format!("impl {name} {{"));
        // By value: a reference would let the header escape into a call the
        // optimiser cannot see, and keep every packet's header struct in
        // memory whether it is traced or not.
        w.line("/// Records this header as extracted (packet trace).");
        w.line("#[cold]");
        w.line("#[inline(never)]");
        w.line("/// `data` is the packet it was extracted from.");
        w.open("pub fn trace_extract(self, tr: &mut ::p4_target::trace::Tracer, instance: &str, data: &[u8]) {");
        w.line(format!("tr.extract(instance, &[{}]);", items.join(", ")));
        w.close("}");
        w.close("}");
        w.line("");
        Ok(())
    }

    /// The P4 name of a header (or stack) expression, for trace output.
    pub(super) fn trace_name(&self, ctx: &Ctx<'_>, e: &Expr) -> String {
        let strip = |s: &str| s.trim_start_matches("r#").to_string();
        match &e.kind {
            ExprKind::Var(VarRef::Local(i)) => ctx
                .vars
                .get(*i as usize)
                .map_or_else(|| "?".into(), |v| v.name.clone()),
            ExprKind::Var(VarRef::BlockParam(i)) => ctx
                .block_params
                .get(*i as usize)
                .map_or_else(|| "?".into(), |n| strip(n)),
            ExprKind::Var(VarRef::BlockLocal(i)) => ctx
                .block_locals
                .get(*i as usize)
                .map_or_else(|| "?".into(), |n| strip(n)),
            ExprKind::Member(base, idx) => {
                format!(
                    "{}.{}",
                    self.trace_name(ctx, base),
                    self.trace_field_name(&base.ty, *idx)
                )
            }
            ExprKind::Index(base, i) => match &i.kind {
                ExprKind::Int(v) => format!("{}[{v}]", self.trace_name(ctx, base)),
                _ => format!("{}[?]", self.trace_name(ctx, base)),
            },
            ExprKind::StackNext(st) => format!("{}.next", self.trace_name(ctx, st)),
            _ => "?".into(),
        }
    }

    /// The P4 name of field `idx` of a composite, for trace output.
    fn trace_field_name(&self, ty: &Ty, idx: u32) -> String {
        match ty {
            Ty::Composite(c) => self.prog.composites[*c]
                .fields
                .get(idx as usize)
                .map_or_else(|| "?".into(), |f| f.name.clone()),
            _ => "?".into(),
        }
    }

    /// After `place.extract(..)` succeeded.
    pub(super) fn trace_extract(&self, ctx: &Ctx<'_>, h: &Expr, place: &str) -> Option<String> {
        self.trace_points.then(|| {
            format!(
                "{ON} {place}.trace_extract(&mut rt.trace, {:?}, packet__.data); }}",
                self.trace_name(ctx, h)
            )
        })
    }

    /// After `stack.elems[stack.next]{field}.extract(..)` and
    /// `stack.next += 1`; `member` is the union member of the element that
    /// was extracted (`field` its Rust path, `.m`), if any.
    pub(super) fn trace_extract_next(
        &self,
        ctx: &Ctx<'_>,
        st: &Expr,
        p: &str,
        member: Option<(&Expr, u32)>,
        field: &str,
    ) -> Option<String> {
        self.trace_points.then(|| {
            let member_name = match member {
                Some((elem, i)) => format!(".{}", self.trace_field_name(&elem.ty, i)),
                None => String::new(),
            };
            format!(
                "{ON} let i__ = {p}.next as usize - 1; {p}.elems[i__]{field}.trace_extract(&mut rt.trace, &format!(\"{}[{{i__}}]{member_name}\"), packet__.data); }}",
                self.trace_name(ctx, st)
            )
        })
    }

    /// At the top of a parser state's arm.
    pub(super) fn trace_parser_state(&mut self, parser: &str, state: &str) {
        if !self.trace_points {
            return;
        }
        self.w.line(format!(
            "{ON} rt.trace.parser_state({parser:?}, {state:?}); }}"
        ));
    }

    /// After a table's lookup, when the hit flag, action id, entry and
    /// parameters (`hit__`, `aid__`, `entry__`, `p__`) are known.
    /// `key_fn`: the key is a closure (see the table function), called again.
    pub(super) fn trace_table(&mut self, rt_index: &str, key_fn: bool) {
        if !self.trace_points {
            return;
        }
        // Copies of the key and parameters, for the reason given at
        // `trace_extract`.
        let key = if key_fn { "&key__()" } else { "&{ key__ }" };
        self.w.line(format!(
            "{ON} rt.trace_table({rt_index}, {key}, hit__, entry__, aid__, &{{ p__ }}); }}"
        ));
    }

    /// A state-changing extern call: `object` is a Rust expression giving
    /// the object's name (or `None`), `index` and `value` Rust expressions
    /// (already evaluated: they are read again here).
    pub(super) fn trace_call(
        &self,
        ctx: &Ctx<'_>,
        call: &str,
        object: Option<String>,
        index: Option<String>,
        value: Option<String>,
    ) -> Option<String> {
        if ctx.kind == BodyKind::Function || !self.trace_points {
            // Functions do not receive the runtime.
            return None;
        }
        let opt = |x: Option<String>, conv: &str| {
            x.map_or_else(|| "None".to_string(), |v| format!("Some(({v}) as {conv})"))
        };
        Some(format!(
            "{ON} rt.trace.call({call:?}, {}, {}, {}); }}",
            object.map_or_else(|| "None".into(), |o| format!("Some({o})")),
            opt(index, "u64"),
            opt(value, "u128"),
        ))
    }

    /// After `place.emit(..)` in a deparser: a header or a union (`kind`),
    /// or with `in_stack` a stack of them, whose valid elements are named
    /// with their index.
    pub(super) fn trace_emit(
        &self,
        ctx: &Ctx<'_>,
        e: &Expr,
        place: &str,
        kind: CompositeKind,
        in_stack: bool,
    ) -> Option<String> {
        if ctx.kind == BodyKind::Function || !self.trace_points {
            return None;
        }
        let name = self.trace_name(ctx, e);
        // A header's validity is a field, a union's a method over its members.
        let valid = |v: &str| match kind {
            CompositeKind::Union => format!("{v}.is_valid()"),
            _ => format!("{v}.valid"),
        };
        Some(if in_stack {
            format!(
                "{ON} for (i__, e__) in {place}.elems.iter().enumerate() {{ if {} {{ rt.trace.call(\"emit\", Some(&format!(\"{name}[{{i__}}]\")), None, None); }} }} }}",
                valid("e__")
            )
        } else {
            format!(
                "{ON} if {} {{ rt.trace.call(\"emit\", Some({name:?}), None, None); }} }}",
                valid(place)
            )
        })
    }

    /// Trace points for a built-in call whose statements are in `s`.
    pub(super) fn trace_builtin(
        &self,
        ctx: &Ctx<'_>,
        b: &Builtin,
        obj: &dyn Fn(u32) -> Option<usize>,
        s: &mut Vec<String>,
    ) -> Result<(), BackError> {
        if !self.trace_points {
            return Ok(());
        }
        let line = match b {
            Builtin::MarkToDrop(_) | Builtin::MarkToDropImplicit => {
                self.trace_call(ctx, "mark_to_drop", None, None, None)
            }
            Builtin::Hash { out, .. } => {
                let v = self.expr(ctx, out)?;
                self.trace_call(ctx, "hash", None, None, Some(v))
            }
            Builtin::Random { out, .. } => {
                let v = self.expr(ctx, out)?;
                self.trace_call(ctx, "random", None, None, Some(v))
            }
            Builtin::Clone { .. } => self.trace_call(
                ctx,
                "clone",
                None,
                Some("env.clone_request.as_ref().map_or(0, |c| c.session)".into()),
                None,
            ),
            Builtin::Resubmit(_) => self.trace_call(ctx, "resubmit", None, None, None),
            Builtin::Recirculate(_) => self.trace_call(ctx, "recirculate", None, None, None),
            Builtin::Digest { .. } => self.trace_call(
                ctx,
                "digest",
                Some("rt.info.digests.iter().find(|d| Some(d.id) == rt.digests.last().map(|x| x.0)).map_or(\"?\", |d| d.name)".into()),
                None,
                None,
            ),
            Builtin::CounterCount { inst, .. } => obj(*inst).and_then(|k| {
                let k = self.names.objects.counter(k);
                self.trace_call(
                    ctx,
                    "count",
                    Some(format!("rt.info.counters[{k}].name")),
                    Some("ix__".into()),
                    None,
                )
            }),
            Builtin::RegisterWrite { inst, .. } => obj(*inst).and_then(|k| {
                let k = self.names.objects.register(k);
                self.trace_call(
                    ctx,
                    "register_write",
                    Some(format!("rt.info.registers[{k}].name")),
                    Some("ix__".into()),
                    Some(format!("rt.registers[{k}].read(ix__)")),
                )
            }),
            Builtin::MeterExecute { inst, out, .. } => {
                let v = self.expr(ctx, out)?;
                obj(*inst).and_then(|k| {
                    let k = self.names.objects.meter(k);
                    self.trace_call(
                        ctx,
                        "execute_meter",
                        Some(format!("rt.info.meters[{k}].name")),
                        Some("ix__".into()),
                        Some(v),
                    )
                })
            }
            _ => None,
        };
        s.extend(line);
        Ok(())
    }
}
