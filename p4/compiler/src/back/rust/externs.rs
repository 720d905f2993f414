//! Built-in and v1model extern calls: header methods, packet
//! extraction/emission, checksums, hashes, registers, counters, meters,
//! digests, clone/resubmit/recirculate (v1model.p4).

use super::*;

impl Gen<'_> {
    pub(super) fn builtin(
        &self,
        ctx: &Ctx<'_>,
        b: &Builtin,
        span: Span,
    ) -> Result<String, BackError> {
        Ok(format!(
            "{{ {} }}",
            self.builtin_lines(ctx, b, span)?.join(" ")
        ))
    }

    /// Where extern instance `inst` of the block being generated is, in
    /// the vector of its kind (registers, counters...) or among the user
    /// extern objects.
    pub(super) fn extern_index(
        &self,
        ctx: &Ctx<'_>,
        inst: u32,
        span: Span,
    ) -> Result<u32, BackError> {
        let found = match (&ctx.externs, ctx.inst) {
            (Some(own), _) => own.get(inst as usize),
            (None, Some(i)) => self.info.layout.instances[i].externs.get(inst as usize),
            (None, None) => None,
        };
        found.copied().ok_or(BackError {
            message: "internal: an extern instance the block does not have".into(),
            span: Some(span),
        })
    }

    /// The statements of a built-in call, one per line (`if .. {` and `}`
    /// lines open and close blocks).
    pub(super) fn builtin_lines(
        &self,
        ctx: &Ctx<'_>,
        b: &Builtin,
        span: Span,
    ) -> Result<Vec<String>, BackError> {
        let extern_index = |inst: u32| self.extern_index(ctx, inst, span);
        let mut s = Vec::new();
        match b {
            Builtin::UserMethod { .. } | Builtin::UserFunction { .. } => {
                s.push(format!("{};", self.user_call(ctx, b, span)?));
            }
            Builtin::MarkToDrop(e) => s.push(format!("{}.mark_to_drop();", self.place(ctx, e)?)),
            Builtin::MarkToDropImplicit => {
                // A top-level action is emitted in every control; the
                // checker lets only controls with standard metadata use one
                // that drops, so elsewhere this line never runs.
                let sm = ctx.inst.and_then(|i| {
                    let c = self.prog.instances[i].control;
                    self.prog.controls[c].params.iter().position(|p| {
                        matches!(&p.ty, Some(Ty::Composite(h))
                            if self.prog.composites[*h].name == "standard_metadata_t")
                    })
                });
                match sm {
                    Some(i) => s.push(format!(
                        "{}.mark_to_drop();",
                        self.var_place(ctx, VarRef::BlockParam(i as u32))
                    )),
                    None => s.push("// mark_to_drop(): not used in this control".into()),
                }
            }
            Builtin::Hash {
                out,
                algo,
                base,
                data,
                max,
            } => {
                let h = match self.pack_bytes(ctx, data, &mut s)? {
                    Some(hb) => format!("rt.hash_bytes({}, &{hb})", info::algo(*algo)),
                    None => {
                        let bp = self.pack(ctx, data, &mut s)?;
                        format!("rt.hash({}, &{bp})", info::algo(*algo))
                    }
                };
                let v = format!(
                    "{BITS}::wrap(::p4_target::externs::hash_range({h}, {}, {}), {})",
                    self.expr(ctx, base)?,
                    self.expr(ctx, max)?,
                    self.width(&out.ty)
                );
                s.push(self.assign_native(ctx, out, &v)?);
            }
            Builtin::Random { out, lo, hi } => {
                let v = format!(
                    "rt.random({}, {})",
                    self.expr(ctx, lo)?,
                    self.expr(ctx, hi)?
                );
                s.push(self.assign_native(ctx, out, &v)?);
            }
            Builtin::VerifyChecksum {
                cond,
                data,
                checksum,
                algo,
                with_payload,
            } => {
                s.push(format!("if {} {{", self.expr(ctx, cond)?));
                let w = self.width(&checksum.ty);
                let computed =
                    self.checksum_of(ctx, *algo, *with_payload, data, w, span, &mut s)?;
                s.push(format!(
                    "if {computed} != {} {{ env.checksum_error = true; }}",
                    self.expr(ctx, checksum)?
                ));
                s.push("}".into());
            }
            Builtin::UpdateChecksum {
                cond,
                data,
                checksum,
                algo,
                with_payload,
            } => {
                s.push(format!("if {} {{", self.expr(ctx, cond)?));
                let w = self.width(&checksum.ty);
                let v = self.checksum_of(ctx, *algo, *with_payload, data, w, span, &mut s)?;
                s.push(self.assign_native(ctx, checksum, &v)?);
                s.push("}".into());
            }
            Builtin::Clone {
                kind,
                session,
                field_list,
            } => {
                let fl = match field_list {
                    Some(n) => format!("Some({n})"),
                    None => "None".into(),
                };
                s.push(format!(
                    "env.clone_request = Some(::p4_target::v1model::CloneRequest {{ kind: if {} == 0 {{ ::p4_target::v1model::CloneType::IngressToEgress }} else {{ ::p4_target::v1model::CloneType::EgressToEgress }}, session: {} as u32, field_list: {fl} }});",
                    self.expr(ctx, kind)?,
                    self.expr(ctx, session)?
                ));
            }
            Builtin::Resubmit(n) => s.push(format!("env.resubmit = Some({n});")),
            Builtin::Recirculate(n) => s.push(format!("env.recirculate = Some({n});")),
            Builtin::Digest { digest, data } => {
                let id = self
                    .names
                    .objects
                    .digests
                    .id
                    .get(*digest as usize)
                    .map_or_else(|| "0".to_string(), |n| format!("digests::{n}"));
                let mut flat = Vec::new();
                self.flatten(data, &mut flat);
                if let Some(d) = flat.iter().find(|d| self.is_wide(&d.ty)) {
                    return self.refuse_wide("a digest field", Some(d.span));
                }
                let vals: Result<Vec<String>, BackError> = flat
                    .iter()
                    .map(|d| {
                        let v = self.expr(ctx, d)?;
                        Ok(if self.is_bits(&d.ty) {
                            v
                        } else {
                            format!("({v} as u128)")
                        })
                    })
                    .collect();
                s.push(format!(
                    "rt.digests.push(({id}, vec![{}]));",
                    vals?.join(", ")
                ));
            }
            Builtin::Truncate(e) => s.push(format!(
                "env.truncate_len = Some({} as u32);",
                self.expr(ctx, e)?
            )),
            Builtin::Assert(c) => {
                if ctx.kind == BodyKind::Parser || ctx.kind == BodyKind::Function {
                    return bad(
                        "internal: assert/assume outside controls (the checker refuses it)",
                        Some(span),
                    );
                }
                s.push(format!(
                    "if !{} {{ env.drop = true; return Err(Exit); }}",
                    self.expr(ctx, c)?
                ));
            }
            Builtin::LogMsg | Builtin::DirectCount => {}
            Builtin::DirectMeterRead { inst, out } => {
                let i = ctx.inst.ok_or(BackError {
                    message: "internal: direct meter outside a control".into(),
                    span: Some(span),
                })?;
                let ci = &self.prog.instances[i];
                let c = &self.prog.controls[ci.control];
                let Some(ti) = c
                    .tables
                    .iter()
                    .position(|t| self.prog.tables[*t].direct_meter == Some(*inst))
                else {
                    return bad(
                        "this direct_meter is not attached to a table with `meters =`",
                        Some(span),
                    );
                };
                let v = format!(
                    "(match env.entry {{ Some(e) => rt.tables[{}].direct_meter_execute(e, env.now_ns, env.packet_length), None => 0 }} as {})",
                    self.names
                        .objects
                        .table(self.info.layout.instances[i].tables[ti] as usize),
                    colour_value_type(out)
                );
                s.push(self.assign_native(ctx, out, &v)?);
            }
            Builtin::Extract(h, Some(len)) => {
                let len = format!(
                    "u32::try_from({}).unwrap_or(u32::MAX)",
                    self.expr(ctx, len)?
                );
                if let Some((st, member)) = extract_next_target(h) {
                    const E: &str = "::p4_target::v1model::error_code";
                    let p = self.place(ctx, st)?;
                    let n = self.stack_len(&st.ty);
                    let field = self.union_member_suffix(member)?;
                    s.push(format!(
                        "if {p}.next as usize >= {n} {{ return Err({E}::STACK_OUT_OF_BOUNDS); }}"
                    ));
                    s.push(format!(
                        "{p}.elems[{p}.next as usize]{field}.extract_var(packet__, {len})?;"
                    ));
                    s.extend(self.invalidate_next_union_siblings(&p, member));
                    s.push(format!("{p}.next += 1;"));
                    s.extend(self.trace_extract_next(ctx, st, &p, member, &field));
                } else {
                    let place = self.place(ctx, h)?;
                    s.push(format!("{place}.extract_var(packet__, {len})?;"));
                    s.extend(self.invalidate_extracted_union_siblings(ctx, h)?);
                    s.extend(self.trace_extract(ctx, h, &place));
                }
            }
            Builtin::Extract(h, None) => {
                const E: &str = "::p4_target::v1model::error_code";
                match extract_next_target(h) {
                    Some((st, member)) => {
                        let p = self.place(ctx, st)?;
                        let n = self.stack_len(&st.ty);
                        let field = self.union_member_suffix(member)?;
                        s.push(format!(
                            "if {p}.next as usize >= {n} {{ return Err({E}::STACK_OUT_OF_BOUNDS); }}"
                        ));
                        s.push(format!(
                            "if !{p}.elems[{p}.next as usize]{field}.extract(packet__) {{ return Err({E}::PACKET_TOO_SHORT); }}"
                        ));
                        s.extend(self.invalidate_next_union_siblings(&p, member));
                        s.push(format!("{p}.next += 1;"));
                        s.extend(self.trace_extract_next(ctx, st, &p, member, &field));
                    }
                    None => {
                        let place = self.place(ctx, h)?;
                        s.push(format!(
                            "if !{place}.extract(packet__) {{ return Err({E}::PACKET_TOO_SHORT); }}"
                        ));
                        s.extend(self.invalidate_extracted_union_siblings(ctx, h)?);
                        s.extend(self.trace_extract(ctx, h, &place));
                    }
                }
            }
            Builtin::Advance(e) => {
                s.push(format!("let adv__ = {} as usize;", self.expr(ctx, e)?));
                s.push("if packet__.data.len() * 8 < packet__.off_bits + adv__ { return Err(::p4_target::v1model::error_code::PACKET_TOO_SHORT); }".into());
                s.push("packet__.off_bits += adv__;".into());
            }
            Builtin::Emit(e) => self.emit_stmt(ctx, e, &mut s)?,
            Builtin::Verify(c, err) => s.push(format!(
                "if !{} {{ return Err({}); }}",
                self.expr(ctx, c)?,
                self.expr(ctx, err)?
            )),
            Builtin::SetValid(h) | Builtin::SetInvalid(h) => {
                let valid = matches!(b, Builtin::SetValid(_));
                // `u.m.setValid()` leaves `m` the union's only valid member;
                // `u.m.setInvalid()` clears `m` alone, so a union whose valid
                // member is another keeps it (P4_16 §8.20, as BMv2).
                if valid && let Some((union, _)) = self.union_member(h) {
                    s.push(format!("{}.invalidate();", self.place(ctx, union)?));
                }
                s.push(format!("{}.valid = {valid};", self.place(ctx, h)?));
            }
            Builtin::PushFront(st, n) => {
                let p = self.place(ctx, st)?;
                let len = self.stack_len(&st.ty);
                s.push(format!(
                    "{{ let n__ = ({n} as usize).min({len}); {p}.elems.copy_within(0..{len} - n__, n__); for e__ in {p}.elems[..n__].iter_mut() {{ *e__ = Default::default(); }} {p}.next = ({p}.next + n__ as u32).min({len}); }}"
                ));
            }
            Builtin::PopFront(st, n) => {
                let p = self.place(ctx, st)?;
                let len = self.stack_len(&st.ty);
                s.push(format!(
                    "{{ let n__ = ({n} as usize).min({len}); {p}.elems.copy_within(n__..{len}, 0); for e__ in {p}.elems[{len} - n__..].iter_mut() {{ *e__ = Default::default(); }} {p}.next = {p}.next.saturating_sub(n__ as u32); }}"
                ));
            }
            // A register of bit<W>/int<W> wider than 128 bits: cells of
            // u64 limbs, read and written as `wide::Bits`.
            Builtin::RegisterRead { inst, out, index } if self.is_wide(&out.ty) => {
                let k = self.names.objects.register(extern_index(*inst)? as usize);
                let cell = format!(
                    "rt.registers[{k}].read_wide::<{}>(u32::try_from({}).unwrap_or(u32::MAX))",
                    self.width(&out.ty).div_ceil(64),
                    self.expr(ctx, index)?
                );
                s.push(self.assign_native(ctx, out, &cell)?);
            }
            Builtin::RegisterWrite { inst, index, value } if self.is_wide(&value.ty) => {
                let k = self.names.objects.register(extern_index(*inst)? as usize);
                s.push(format!(
                    "let ix__ = u32::try_from({}).unwrap_or(u32::MAX);",
                    self.expr(ctx, index)?
                ));
                s.push(format!(
                    "rt.registers[{k}].write_wide(ix__, {});",
                    self.expr(ctx, value)?
                ));
            }
            Builtin::RegisterRead { out, .. } | Builtin::RegisterWrite { value: out, .. }
                if self.cell_bits(out) > 128 =>
            {
                return self.refuse_wide("a register cell", Some(out.span));
            }
            Builtin::RegisterRead { inst, out, index } => {
                let k = self.names.objects.register(extern_index(*inst)? as usize);
                let cell = format!(
                    "rt.registers[{k}].read(u32::try_from({}).unwrap_or(u32::MAX))",
                    self.expr(ctx, index)?
                );
                // A struct cell: its fields are the cell's bits, the first
                // field highest.
                let mut fields = Vec::new();
                self.flatten(std::slice::from_ref(out), &mut fields);
                let total: u32 = fields.iter().map(|f| self.cell_width(&f.ty)).sum();
                let src = if matches!(out.ty, Ty::Composite(_)) {
                    let c = ctx.tmp("cell");
                    s.push(format!("let {c}: u128 = {cell};"));
                    c
                } else {
                    cell
                };
                let mut shift = total;
                for f in &fields {
                    let w = self.cell_width(&f.ty);
                    shift -= w;
                    let mut v = if fields.len() == 1 {
                        src.clone()
                    } else {
                        format!("(({src} >> {shift}) & {})", mask_literal(w))
                    };
                    if f.ty == Ty::Bool {
                        v = format!("({v} != 0)");
                    }
                    s.push(self.assign_native(ctx, f, &v)?);
                }
            }
            Builtin::RegisterWrite { inst, index, value } => {
                let k = self.names.objects.register(extern_index(*inst)? as usize);
                let mut fields = Vec::new();
                self.flatten(std::slice::from_ref(value), &mut fields);
                let mut v = String::new();
                for f in &fields {
                    let w = self.cell_width(&f.ty);
                    let mut x = self.expr(ctx, f)?;
                    if f.ty == Ty::Bool {
                        x = format!("u128::from({x})");
                    }
                    v = if fields.len() == 1 {
                        x
                    } else if v.is_empty() {
                        format!("(({x}) & {})", mask_literal(w))
                    } else {
                        format!("(({v}) << {w}) | (({x}) & {})", mask_literal(w))
                    };
                }
                s.push(format!(
                    "let ix__ = u32::try_from({}).unwrap_or(u32::MAX);",
                    self.expr(ctx, index)?
                ));
                s.push(format!("rt.registers[{k}].write(ix__, {v});"));
            }
            Builtin::CounterCount { inst, index } => {
                let k = self.names.objects.counter(extern_index(*inst)? as usize);
                s.push(format!(
                    "let ix__ = u32::try_from({}).unwrap_or(u32::MAX);",
                    self.expr(ctx, index)?
                ));
                s.push(format!("rt.counters[{k}].count(ix__, env.packet_length);"));
            }
            Builtin::MeterExecute { inst, index, out } => {
                let k = self.names.objects.meter(extern_index(*inst)? as usize);
                s.push(format!(
                    "let ix__ = u32::try_from({}).unwrap_or(u32::MAX);",
                    self.expr(ctx, index)?
                ));
                let v = format!(
                    "(rt.meters[{k}].execute(ix__, env.now_ns, env.packet_length) as {})",
                    colour_value_type(out)
                );
                s.push(self.assign_native(ctx, out, &v)?);
            }
        }
        let obj = |inst: u32| extern_index(inst).ok().map(|k| k as usize);
        self.trace_builtin(ctx, b, &obj, &mut s)?;
        Ok(s)
    }

    /// The `width`-bit checksum of field list `data` (verify/update_checksum):
    /// computed straight from the field values when [`Self::csum16_direct`]
    /// can, else by packing the fields (statements pushed to `s`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn checksum_of(
        &self,
        ctx: &Ctx<'_>,
        algo: p4_target::info::HashAlgorithm,
        with_payload: bool,
        data: &[Expr],
        width: u32,
        span: Span,
        s: &mut Vec<String>,
    ) -> Result<String, BackError> {
        if let Some(v) = self.csum16_direct(ctx, algo, with_payload, data, width)? {
            return Ok(v);
        }
        if with_payload && let Some(i) = ctx.inst {
            self.payload_readers.borrow_mut().insert(i);
        }
        let bp = self.pack(ctx, data, s)?;
        self.checksum_value(algo, &bp, width, with_payload, span)
    }

    /// The field list `data` as [`Self::csum16_direct`] sums it; `None`
    /// when it cannot (another algorithm, the payload, members that are
    /// not scalars of 1 to 128 bits but for a varbit ending a list of whole
    /// bytes, or nothing to sum).
    pub(super) fn csum16_list(
        &self,
        algo: p4_target::info::HashAlgorithm,
        with_payload: bool,
        data: &[Expr],
    ) -> Option<Csum16List> {
        if algo != p4_target::info::HashAlgorithm::Csum16 || with_payload {
            return None;
        }
        let mut scalars = Vec::new();
        self.flatten(data, &mut scalars);
        // A varbit is allowed as the last member (IPv4 options): its length is
        // only known at run time, so the field weights are computed then.
        let varbit = scalars.pop_if(|d| matches!(d.ty, Ty::Varbit(_)));
        let mut widths = Vec::new();
        for d in &scalars {
            let w = match &d.ty {
                Ty::Bool => 1,
                t if self.is_bits(t) => self.width(t),
                _ => return None,
            };
            if w == 0 || w > 128 {
                return None;
            }
            widths.push(w);
        }
        let whole_bytes = widths.iter().sum::<u32>().is_multiple_of(8);
        if varbit.as_ref().map_or(widths.is_empty(), |_| !whole_bytes) {
            return None;
        }
        Some(Csum16List {
            scalars,
            varbit,
            widths,
        })
    }

    /// `csum16` of a field list of fixed-width scalars computed straight
    /// from the field values (see `p4_target::externs::csum16_finish`),
    /// without packing them into bytes; `None` when the list has varbits or
    /// other members, or another algorithm is asked for.
    pub(super) fn csum16_direct(
        &self,
        ctx: &Ctx<'_>,
        algo: p4_target::info::HashAlgorithm,
        with_payload: bool,
        data: &[Expr],
        width: u32,
    ) -> Result<Option<String>, BackError> {
        let Some(list) = self.csum16_list(algo, with_payload, data) else {
            return Ok(None);
        };
        let varbit = match &list.varbit {
            Some(d) => Some(self.place(ctx, d)?),
            None => None,
        };
        let mut fields = Vec::new();
        for (d, &w) in list.scalars.iter().zip(&list.widths) {
            let v = self.expr(ctx, d)?;
            let v = if d.ty == Ty::Bool {
                format!("({v} as u128)")
            } else {
                format!("({v})")
            };
            fields.push((v, w));
        }
        let total: u32 = list.widths.iter().sum();
        // Bits after a field's end in the list padded to 16 bits, mod 16:
        // the padded length is a multiple of 16, so this is a constant even
        // when a varbit of run-time length follows.
        let shift = |end: u32, extra: u32| (i64::from(extra) - i64::from(end)).rem_euclid(16);
        let vb_term = "::p4_target::externs::csum16_weighted_bytes(vb__, pad__ - total__)";
        // `finish_fn` folds the sum: `csum16_finish` (u128) or
        // `csum16_finish_u64` (fixed folds, no loop).
        let finish = |finish_fn: &str, sum: String| match &varbit {
            None => format!("{BITS}::wrap(::p4_target::externs::{finish_fn}({sum}), {width})"),
            Some(vb) => format!(
                "({{ let vb__ = {vb}.used(); let total__ = {total} + 8 * vb__.len() as u32; \
                 let pad__ = total__.div_ceil(16) * 16; \
                 {BITS}::wrap(::p4_target::externs::{finish_fn}({sum}), {width}) }})"
            ),
        };
        if list.sums_in_u64() {
            let mut end = 0;
            let field_terms: Vec<String> = fields
                .iter()
                .map(|(v, w)| {
                    end += w;
                    format!(
                        "((({v}) as u64 & {}) << {})",
                        mask_literal(*w),
                        shift(end, 0)
                    )
                })
                .collect();
            // Runs of one header's fields are summed from its wire bytes
            // when it still has them, else from these same field terms.
            // Fields of a run written since they were extracted are added
            // from their values either way.
            let mut terms = Vec::new();
            let mut i = 0;
            for run in self.wire_runs(ctx, &list.scalars)? {
                terms.extend_from_slice(&field_terms[i..run.first]);
                let (written, kept): (Vec<_>, Vec<_>) =
                    (run.first..run.end).partition(|k| run.written.contains(k));
                terms.extend(written.iter().map(|k| field_terms[*k].clone()));
                let kept: Vec<&str> = kept.iter().map(|k| field_terms[*k].as_str()).collect();
                terms.push(format!(
                    "(match {} {{ Some(sum__) => sum__, None => {} }})",
                    run.call,
                    kept.join(" + ")
                ));
                i = run.end;
            }
            terms.extend_from_slice(&field_terms[i..]);
            if varbit.is_some() {
                terms.push(format!("({vb_term} as u64)"));
            }
            return Ok(Some(finish("csum16_finish_u64", terms.join(" + "))));
        }
        let mut end = 0;
        let mut terms = Vec::new();
        for (v, w) in &fields {
            let w = *w;
            end += w;
            if w > 64 {
                // Split so no term can overflow 128 bits once shifted.
                terms.push(format!(
                    "((({v} >> 64) & {}) << {})",
                    mask_literal(w - 64),
                    shift(end, 64)
                ));
                terms.push(format!(
                    "(({v} & 0xffff_ffff_ffff_ffff) << {})",
                    shift(end, 0)
                ));
            } else {
                terms.push(format!(
                    "(({v} & {}) << {})",
                    mask_literal(w),
                    shift(end, 0)
                ));
            }
        }
        if varbit.is_some() {
            terms.push(vb_term.to_string());
        }
        Ok(Some(finish("csum16_finish", terms.join(" + "))))
    }

    /// The checksum of packer `bp` (and the payload) as a `width`-bit value.
    pub(super) fn checksum_value(
        &self,
        algo: p4_target::info::HashAlgorithm,
        bp: &str,
        width: u32,
        with_payload: bool,
        span: Span,
    ) -> Result<String, BackError> {
        if !with_payload {
            return Ok(format!(
                "::p4_target::externs::update_checksum({}, &{bp}, {width})",
                info::algo(algo)
            ));
        }
        if algo != p4_target::info::HashAlgorithm::Csum16 {
            return bad(
                "internal: a checksum with payload other than csum16 (the checker refuses it)",
                Some(span),
            );
        }
        Ok(format!(
            "{BITS}::wrap(csum16_with_payload({bp}.bytes(), &env.data[env.payload_offset.min(env.data.len())..]), {width})"
        ))
    }

    /// After a successful `extract(u.m)` of a union member: the other
    /// members become invalid (a failed extract changes nothing).
    fn invalidate_extracted_union_siblings(
        &self,
        ctx: &Ctx<'_>,
        h: &Expr,
    ) -> Result<Option<String>, BackError> {
        Ok(match self.union_member(h) {
            Some((union, keep)) => {
                Some(self.invalidate_union_siblings(&self.place(ctx, union)?, &union.ty, keep))
            }
            None => None,
        })
    }

    /// After a successful `extract(hs.next.m)`: the other members of the
    /// element at `nextIndex` become invalid.
    fn invalidate_next_union_siblings(
        &self,
        p: &str,
        member: Option<(&Expr, u32)>,
    ) -> Option<String> {
        let (elem, keep) = member?;
        Some(self.invalidate_union_siblings(
            &format!("{p}.elems[{p}.next as usize]"),
            &elem.ty,
            keep,
        ))
    }

    /// The Rust path from a stack element to the union member an
    /// `extract(hs.next.member)` fills (`.member`), or nothing for
    /// `extract(hs.next)`.
    fn union_member_suffix(&self, member: Option<(&Expr, u32)>) -> Result<String, BackError> {
        Ok(match member {
            Some((elem, i)) => format!(".{}", self.field_name(&elem.ty, i)?),
            None => String::new(),
        })
    }

    pub(super) fn emit_stmt(
        &self,
        ctx: &Ctx<'_>,
        e: &Expr,
        s: &mut Vec<String>,
    ) -> Result<(), BackError> {
        match &e.ty {
            Ty::Composite(c) => {
                let comp = &self.prog.composites[*c];
                match comp.kind {
                    CompositeKind::Header | CompositeKind::Union => {
                        let place = self.place(ctx, e)?;
                        s.push(format!("{place}.emit(packet__);"));
                        s.extend(self.trace_emit(ctx, e, &place, comp.kind, false));
                    }
                    CompositeKind::Struct => {
                        for (i, f) in comp.fields.iter().enumerate() {
                            let m = Expr {
                                kind: ExprKind::Member(Box::new(e.clone()), i as u32),
                                ty: f.ty.clone(),
                                span: e.span,
                            };
                            self.emit_stmt(ctx, &m, s)?;
                        }
                    }
                }
            }
            Ty::Stack(elem, _) => {
                let place = self.place(ctx, e)?;
                s.push(format!(
                    "for e__ in {place}.elems.iter() {{ e__.emit(packet__); }}"
                ));
                // A stack holds headers or header unions.
                let kind = match &**elem {
                    Ty::Composite(c) => self.prog.composites[*c].kind,
                    _ => CompositeKind::Header,
                };
                s.extend(self.trace_emit(ctx, e, &place, kind, true));
            }
            _ => return bad("emit needs a header, union, stack or struct", Some(e.span)),
        }
        Ok(())
    }
}

/// The stack an `extract` fills at its `nextIndex`: `extract(hs.next)`, or
/// `extract(hs.next.member)` for a stack of header unions, with the element
/// (`hs.next`) and the member's index. Both advance `nextIndex` once the
/// header is extracted (P4_16 §8.18, and §8.20 for unions in a stack).
fn extract_next_target(h: &Expr) -> Option<(&Expr, Option<(&Expr, u32)>)> {
    match &h.kind {
        ExprKind::StackNext(st) => Some((st, None)),
        ExprKind::Member(elem, i) => match &elem.kind {
            ExprKind::StackNext(st) => Some((st, Some((&**elem, *i)))),
            _ => None,
        },
        _ => None,
    }
}

/// The Rust type a meter's colour code is written as into `out`: a plain
/// enum's value is its `u32` code (the checker lets a colour go into one,
/// `holds_meter_colour`), anything else takes a `u128` value.
fn colour_value_type(out: &Expr) -> &'static str {
    if matches!(out.ty, Ty::Enum(_)) {
        "u32"
    } else {
        "u128"
    }
}

/// A field list `csum16` sums straight from its members
/// ([`Gen::csum16_list`]).
pub(super) struct Csum16List {
    /// Its scalar members in order, the varbit left out.
    pub(super) scalars: Vec<Expr>,
    /// The varbit that ends it, if one does.
    pub(super) varbit: Option<Expr>,
    /// The width of each scalar.
    pub(super) widths: Vec<u32>,
}

impl Csum16List {
    /// Summed in a u64, where runs of a header's fields may be summed from
    /// its wire bytes ([`Gen::wire_runs`]): every term is below 2^47 and
    /// there are fewer than 2^16 (a varbit adds at most 2^8 bytes below
    /// 2^23 each). Summed as u128 it gets vectorised into wide loads of the
    /// header struct, which stall on the narrow stores that just wrote its
    /// fields.
    pub(super) fn sums_in_u64(&self) -> bool {
        self.widths.iter().all(|w| *w <= 32) && self.widths.len() < 1 << 16
    }
}
