//! Expressions and places (P4_16 §8): every bit-string value is
//! a `u128` masked to its width, written back to native-width fields.

use super::*;

impl Gen<'_> {
    pub(super) fn var_place(&self, ctx: &Ctx<'_>, v: VarRef) -> String {
        match v {
            VarRef::Local(i) => {
                let var = &ctx.vars[i as usize];
                let n = &ctx.var_names[i as usize];
                match var.param {
                    Some(Direction::Out | Direction::InOut) => format!("(*{n})"),
                    _ => n.clone(),
                }
            }
            VarRef::BlockParam(i) => format!("(*{})", ctx.block_params[i as usize]),
            VarRef::BlockLocal(i) => format!("l.{}", ctx.block_locals[i as usize]),
        }
    }

    pub(super) fn field_name(&self, base_ty: &Ty, idx: u32) -> Result<String, BackError> {
        match base_ty {
            Ty::Composite(c) => match self.prog.composites[*c].fields.get(idx as usize) {
                Some(f) => Ok(field_ident(&f.name)),
                None => bad("internal: field index out of range", None),
            },
            // A tuple element (`t[K]`) is the Rust tuple's field `K`.
            Ty::Tuple(items) if (idx as usize) < items.len() => Ok(idx.to_string()),
            _ => bad("internal: member of a non-composite", None),
        }
    }

    pub(super) fn stack_len(&self, ty: &Ty) -> u32 {
        match ty {
            Ty::Stack(_, n) => *n,
            _ => 1,
        }
    }

    /// Whether `e` names storage (so `place` works on it).
    pub(super) fn is_place(e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Var(_) => true,
            ExprKind::Member(b, _)
            | ExprKind::Index(b, _)
            | ExprKind::StackLast(b)
            | ExprKind::StackNext(b) => Self::is_place(b),
            _ => false,
        }
    }

    /// A Rust place expression (native storage) for an l-value.
    pub(super) fn place(&self, ctx: &Ctx<'_>, e: &Expr) -> Result<String, BackError> {
        Ok(match &e.kind {
            ExprKind::Var(v) => self.var_place(ctx, *v),
            ExprKind::Member(b, i) => {
                format!("{}.{}", self.place(ctx, b)?, self.field_name(&b.ty, *i)?)
            }
            ExprKind::Index(b, i) => {
                let n = self.stack_len(&b.ty);
                format!(
                    "{}.elems[({} as usize).min({})]",
                    self.place(ctx, b)?,
                    self.expr(ctx, i)?,
                    n.saturating_sub(1)
                )
            }
            ExprKind::StackLast(b) => {
                let p = self.place(ctx, b)?;
                format!("{p}.elems[({p}.next as usize).saturating_sub(1)]")
            }
            ExprKind::StackNext(b) => {
                let p = self.place(ctx, b)?;
                let n = self.stack_len(&b.ty);
                format!(
                    "{p}.elems[({p}.next as usize).min({})]",
                    n.saturating_sub(1)
                )
            }
            _ => return bad("internal: not an l-value", Some(e.span)),
        })
    }

    /// The canonical value of an expression: `u128` masked to the width for
    /// bit strings, `bool`, `u32` for error/enum, the struct for composites.
    pub(super) fn expr(&self, ctx: &Ctx<'_>, e: &Expr) -> Result<String, BackError> {
        let w = self.width(&e.ty);
        Ok(match &e.kind {
            ExprKind::Int(v) if self.is_wide(&e.ty) => {
                format!("{}::from_u128({})", wide_path(w), lit(*v))
            }
            ExprKind::Int(v) => lit(*v),
            ExprKind::WideInt(limbs) => {
                let limbs: Vec<String> = limbs.iter().map(|l| format!("{l:#x}")).collect();
                format!("{}::from_limbs(&[{}])", wide_path(w), limbs.join(", "))
            }
            ExprKind::EnumMember(..) if self.is_wide(&e.ty) => {
                return self.refuse_wide("a serializable enum", Some(e.span));
            }
            ExprKind::Bool(b) => b.to_string(),
            ExprKind::ErrorCode(c) => format!("{c}u32"),
            ExprKind::EnumMember(h, i) => {
                let en = &self.prog.enums[*h];
                match &en.repr {
                    Some(_) => lit(en.members[*i as usize].1),
                    None => format!("{i}u32"),
                }
            }
            ExprKind::Member(b, i) if !Self::is_place(b) => {
                let v = format!("({}).{}", self.expr(ctx, b)?, self.field_name(&b.ty, *i)?);
                self.native_to_value(&v, &e.ty)
            }
            // An element of a stack that is a value, not storage (the
            // result of a function call, `h()[0]`): read from the
            // temporary, which lives to the end of the statement.
            ExprKind::Index(b, i) if !Self::is_place(b) => {
                let n = self.stack_len(&b.ty);
                format!(
                    "({}).elems[({} as usize).min({})].clone()",
                    self.expr(ctx, b)?,
                    self.expr(ctx, i)?,
                    n.saturating_sub(1)
                )
            }
            ExprKind::StackLast(b) if !Self::is_place(b) => format!(
                "{{ let s__ = {}; s__.elems[(s__.next as usize).saturating_sub(1)].clone() }}",
                self.expr(ctx, b)?
            ),
            ExprKind::Var(_)
            | ExprKind::Member(..)
            | ExprKind::Index(..)
            | ExprKind::StackLast(_)
            | ExprKind::StackNext(_) => self.native_to_value(&self.place(ctx, e)?, &e.ty),
            ExprKind::StackLastIndex(b) => {
                format!(
                    "(({}.next as u128).wrapping_sub(1) & 0xffff_ffff)",
                    self.place_or_value(ctx, b)?
                )
            }
            ExprKind::StackNextIndex(b) => {
                format!("({}.next as u128)", self.place_or_value(ctx, b)?)
            }
            ExprKind::IsValid(b) => match &b.ty {
                Ty::Composite(c) if self.prog.composites[*c].kind == CompositeKind::Union => {
                    format!("{}.is_valid()", self.place_or_value(ctx, b)?)
                }
                _ => format!("{}.valid", self.place_or_value(ctx, b)?),
            },
            ExprKind::Unary(op, a) if self.is_wide(&e.ty) => {
                let x = self.expr(ctx, a)?;
                match op {
                    UnOp::Not => format!("(!{x})"),
                    UnOp::BitNot => format!("({x}).not({w})"),
                    UnOp::Neg => format!("({x}).neg({w})"),
                }
            }
            ExprKind::Unary(op, a) => {
                let x = self.expr(ctx, a)?;
                match op {
                    UnOp::Not => format!("(!{x})"),
                    UnOp::BitNot => format!("{BITS}::wrap(!{x}, {w})"),
                    UnOp::Neg => format!("{BITS}::wrap(0u128.wrapping_sub({x}), {w})"),
                }
            }
            ExprKind::Binary(op, a, b) => self.binary(ctx, *op, a, b, &e.ty)?,
            ExprKind::Slice(a, hi, lo) if self.is_wide(&a.ty) => {
                let x = self.expr(ctx, a)?;
                if hi - lo < 128 {
                    format!("({x}).slice_u128({hi}, {lo})")
                } else {
                    format!("({x}).slice::<{}>({hi}, {lo})", (hi - lo + 1).div_ceil(64))
                }
            }
            ExprKind::Slice(a, hi, lo) => {
                format!("{BITS}::slice({}, {hi}, {lo})", self.expr(ctx, a)?)
            }
            ExprKind::Cast(a) => self.cast(ctx, a, &e.ty)?,
            ExprKind::Mux(c, a, b) => format!(
                "(if {} {{ {} }} else {{ {} }})",
                self.expr(ctx, c)?,
                self.expr(ctx, a)?,
                self.expr(ctx, b)?
            ),
            ExprKind::List(items) => match &e.ty {
                Ty::Composite(c) => {
                    let comp = &self.prog.composites[*c];
                    let mut parts = Vec::new();
                    if comp.kind == CompositeKind::Header {
                        parts.push("valid: true".to_string());
                    }
                    if self.wire_kept.contains(&c.index()) {
                        parts.push("wire__: ::p4_target::support::WireAt::NONE".to_string());
                    }
                    for (f, it) in comp.fields.iter().zip(items) {
                        let v = self.to_native(&self.expr(ctx, it)?, &f.ty)?;
                        parts.push(format!("{}: {v}", field_ident(&f.name)));
                    }
                    format!("{} {{ {} }}", self.rust_ty(&e.ty)?, parts.join(", "))
                }
                Ty::Tuple(tys) => {
                    let mut parts = Vec::new();
                    for (t, it) in tys.iter().zip(items) {
                        parts.push(self.to_native(&self.expr(ctx, it)?, t)?);
                    }
                    format!("({},)", parts.join(", "))
                }
                Ty::Stack(..) => self.stack_value(ctx, items, &e.ty, "0")?,
                _ => {
                    return bad(
                        "not supported yet: tuple values outside extern arguments",
                        Some(e.span),
                    );
                }
            },
            ExprKind::TableHit(t, hit) => {
                let call = self.table_call(ctx, *t)?;
                if *hit {
                    format!("{call}?.hit")
                } else {
                    format!("(!{call}?.hit)")
                }
            }
            ExprKind::Call(c) => self.call(ctx, c, e.span)?,
            ExprKind::Default => match &e.ty {
                Ty::Composite(_) | Ty::Stack(..) | Ty::Varbit(_) | Ty::Tuple(_) => {
                    self.default_value(&e.ty)?
                }
                _ => return bad("internal: a default value of a scalar type", Some(e.span)),
            },
            ExprKind::PacketLength => "(packet__.length() as u128)".to_string(),
            ExprKind::Lookahead => {
                let bits = match &e.ty {
                    Ty::Composite(c) => self.prog.composites[*c].header_bits(self.prog),
                    t => self.width(t),
                };
                if matches!(&e.ty, Ty::Composite(c)
                        if self.prog.composites[*c].kind == CompositeKind::Struct)
                    || matches!(&e.ty, Ty::Tuple(_))
                {
                    // The checker let through a struct of scalars of at
                    // most 128 bits in all (one read), or else one it
                    // reads member by member.
                    let total = self.lookahead_width(&e.ty);
                    if self.scalar_leaves(&e.ty) && (1..=128).contains(&total) {
                        return self.lookahead_struct(&e.ty);
                    }
                    return self.lookahead_by_member(&e.ty);
                }
                if let Ty::Composite(_) = &e.ty {
                    return Ok(format!(
                        "{{ let mut h__ = {}::default(); let mut c__ = PacketIn {{ data: packet__.data, off_bits: packet__.off_bits }}; if !h__.extract(&mut c__) {{ return Err(::p4_target::v1model::error_code::PACKET_TOO_SHORT); }} h__ }}",
                        self.rust_ty(&e.ty)?
                    ));
                }
                if bits == 0 {
                    // `lookahead<bit<0>>()`: no bits to read, its only value.
                    return Ok("0u128".to_string());
                }
                let v = format!(
                    "packet__.lookahead({bits}).ok_or(::p4_target::v1model::error_code::PACKET_TOO_SHORT)?"
                );
                if e.ty == Ty::Bool {
                    format!("({v} != 0)")
                } else {
                    v
                }
            }
        })
    }

    pub(super) fn binary(
        &self,
        ctx: &Ctx<'_>,
        op: BinOp,
        a: &Expr,
        b: &Expr,
        ty: &Ty,
    ) -> Result<String, BackError> {
        if self.is_wide(ty) || self.is_wide(&a.ty) || self.is_wide(&b.ty) {
            return self.binary_wide(ctx, op, a, b, ty);
        }
        let x = self.expr(ctx, a)?;
        let y = self.expr(ctx, b)?;
        let w = self.width(ty);
        let aw = self.width(&a.ty);
        let signed = a.ty.is_signed(self.prog);
        Ok(match op {
            BinOp::Add => format!("{BITS}::wrap({x}.wrapping_add({y}), {w})"),
            BinOp::Sub => format!("{BITS}::wrap({x}.wrapping_sub({y}), {w})"),
            BinOp::Mul => format!("{BITS}::wrap({x}.wrapping_mul({y}), {w})"),
            BinOp::Div => format!("{x}.checked_div({y}).unwrap_or(0)"),
            BinOp::Mod => format!("{x}.checked_rem({y}).unwrap_or(0)"),
            BinOp::SatAdd if signed => format!("{BITS}::sat_add_s({x}, {y}, {w})"),
            BinOp::SatAdd => format!("{BITS}::sat_add_u({x}, {y}, {w})"),
            BinOp::SatSub if signed => format!("{BITS}::sat_sub_s({x}, {y}, {w})"),
            BinOp::SatSub => format!("{BITS}::sat_sub_u({x}, {y})"),
            BinOp::BitAnd => format!("({x} & {y})"),
            BinOp::BitOr => format!("({x} | {y})"),
            BinOp::BitXor => format!("({x} ^ {y})"),
            BinOp::Shl => format!("{BITS}::shl({x}, {y}, {w})"),
            BinOp::Shr if signed => format!("{BITS}::shr_s({x}, {y}, {w})"),
            BinOp::Shr => format!("{BITS}::shr_u({x}, {y}, {w})"),
            // Stacks are equal when their elements are (P4_16 §8.18), whatever
            // their `nextIndex`.
            BinOp::Eq if matches!(a.ty, Ty::Stack(..)) => format!("({x}.elems == {y}.elems)"),
            BinOp::Ne if matches!(a.ty, Ty::Stack(..)) => format!("({x}.elems != {y}.elems)"),
            BinOp::Eq => format!("({x} == {y})"),
            BinOp::Ne => format!("({x} != {y})"),
            BinOp::Lt if signed => format!("{BITS}::lt_s({x}, {y}, {aw})"),
            BinOp::Le if signed => format!("(!{BITS}::lt_s({y}, {x}, {aw}))"),
            BinOp::Gt if signed => format!("{BITS}::lt_s({y}, {x}, {aw})"),
            BinOp::Ge if signed => format!("(!{BITS}::lt_s({x}, {y}, {aw}))"),
            BinOp::Lt => format!("({x} < {y})"),
            BinOp::Le => format!("({x} <= {y})"),
            BinOp::Gt => format!("({x} > {y})"),
            BinOp::Ge => format!("({x} >= {y})"),
            BinOp::And => format!("({x} && {y})"),
            BinOp::Or => format!("({x} || {y})"),
            BinOp::Concat => format!("{BITS}::concat({x}, {y}, {})", self.width(&b.ty)),
        })
    }

    /// A binary operation where an operand or the result is wider than 128
    /// bits: `wide::Bits` methods; a narrow operand is widened first, a
    /// shift amount narrowed (saturating).
    fn binary_wide(
        &self,
        ctx: &Ctx<'_>,
        op: BinOp,
        a: &Expr,
        b: &Expr,
        ty: &Ty,
    ) -> Result<String, BackError> {
        let x = self.expr(ctx, a)?;
        let y = self.expr(ctx, b)?;
        let w = self.width(ty);
        let aw = self.width(&a.ty);
        let signed = a.ty.is_signed(self.prog);
        // The shift amount as a u128 (an amount of 2^128 or more shifts
        // everything out all the same).
        let amount = || {
            if self.is_wide(&b.ty) {
                format!("({y}).amount()")
            } else {
                y.clone()
            }
        };
        // A value as `Bits<2>` when it is narrow (for `++`).
        let as_bits = |e: &Expr, v: &str| {
            if self.is_wide(&e.ty) {
                v.to_string()
            } else {
                format!("{}::from_u128({v})", wide_path(128))
            }
        };
        Ok(match op {
            // Shifts keep the type of the left operand, which may be narrow.
            BinOp::Shl if !self.is_wide(&a.ty) => format!("{BITS}::shl({x}, {}, {w})", amount()),
            BinOp::Shr if !self.is_wide(&a.ty) && signed => {
                format!("{BITS}::shr_s({x}, {}, {w})", amount())
            }
            BinOp::Shr if !self.is_wide(&a.ty) => format!("{BITS}::shr_u({x}, {}, {w})", amount()),
            BinOp::Shl => format!("({x}).shl({}, {w})", amount()),
            BinOp::Shr if signed => format!("({x}).shr_s({}, {w})", amount()),
            BinOp::Shr => format!("({x}).shr_u({}, {w})", amount()),
            BinOp::Concat => format!(
                "{}::concat({}, {}, {}, {w})",
                wide_path(w),
                as_bits(a, &x),
                as_bits(b, &y),
                self.width(&b.ty)
            ),
            BinOp::Add => format!("({x}).add({y}, {w})"),
            BinOp::Sub => format!("({x}).sub({y}, {w})"),
            BinOp::Mul => format!("({x}).mul({y}, {w})"),
            BinOp::BitAnd => format!("({x}).and({y})"),
            BinOp::BitOr => format!("({x}).or({y})"),
            BinOp::BitXor => format!("({x}).xor({y})"),
            BinOp::Eq => format!("({x} == {y})"),
            BinOp::Ne => format!("({x} != {y})"),
            BinOp::Lt if signed => format!("({x}).lt_s(&{y}, {aw})"),
            BinOp::Le if signed => format!("(!({y}).lt_s(&{x}, {aw}))"),
            BinOp::Gt if signed => format!("({y}).lt_s(&{x}, {aw})"),
            BinOp::Ge if signed => format!("(!({x}).lt_s(&{y}, {aw}))"),
            BinOp::Lt => format!("({x}).lt_u(&{y})"),
            BinOp::Le => format!("(!({y}).lt_u(&{x}))"),
            BinOp::Gt => format!("({y}).lt_u(&{x})"),
            BinOp::Ge => format!("(!({x}).lt_u(&{y}))"),
            BinOp::Div => format!("({x}).div_rem({y}).0"),
            BinOp::Mod => format!("({x}).div_rem({y}).1"),
            BinOp::SatAdd if signed => format!("({x}).sat_add_s({y}, {w})"),
            BinOp::SatAdd => format!("({x}).sat_add_u({y}, {w})"),
            BinOp::SatSub if signed => format!("({x}).sat_sub_s({y}, {w})"),
            BinOp::SatSub => format!("({x}).sat_sub_u({y}, {w})"),
            BinOp::And | BinOp::Or => {
                return bad(
                    "internal: `&&`/`||` on bit strings",
                    Some(a.span.to(b.span)),
                );
            }
        })
    }

    pub(super) fn cast(&self, ctx: &Ctx<'_>, a: &Expr, to: &Ty) -> Result<String, BackError> {
        let x = self.expr(ctx, a)?;
        if self.is_wide(&a.ty) || self.is_wide(to) {
            let (fw, fs, tw) = (self.width(&a.ty), a.ty.is_signed(self.prog), self.width(to));
            return Ok(match (&a.ty, to) {
                (Ty::Bool, _) => format!("{}::from_u128({x} as u128)", wide_path(tw)),
                (_, Ty::Bool) => format!("(!({x}).is_zero())"),
                (f, t) if self.is_wide(f) && self.is_wide(t) => {
                    format!("{}::cast_from({x}, {fw}, {fs}, {tw})", wide_path(tw))
                }
                (f, t) if self.is_bits(f) && self.is_wide(t) => {
                    format!("{}::cast_from_u128({x}, {fw}, {fs}, {tw})", wide_path(tw))
                }
                (f, t) if self.is_wide(f) && self.is_bits(t) => {
                    format!("({x}).cast_to_u128({fw}, {fs}, {tw})")
                }
                _ => return bad("not supported yet: this cast", Some(a.span)),
            });
        }
        Ok(match (&a.ty, to) {
            (Ty::Bool, Ty::Bool) => x,
            (Ty::Bool, _) if self.is_bits(to) => format!("({x} as u128)"),
            (_, Ty::Bool) if self.is_bits(&a.ty) => format!("({x} != 0)"),
            (f, t) if self.is_bits(f) && self.is_bits(t) => format!(
                "{BITS}::cast({x}, {}, {}, {})",
                self.width(f),
                f.is_signed(self.prog),
                self.width(t)
            ),
            (f, t) if f == t => x,
            _ => return bad("not supported yet: this cast", Some(a.span)),
        })
    }

    pub(super) fn pack(
        &self,
        ctx: &Ctx<'_>,
        data: &[Expr],
        out: &mut Vec<String>,
    ) -> Result<String, BackError> {
        let bp = ctx.tmp("bp");
        out.push(format!(
            "let mut {bp} = ::p4_target::externs::BitPacker::new();"
        ));
        let mut total = 0u32;
        let mut flat = Vec::new();
        self.flatten(data, &mut flat);
        for d in flat {
            if let Ty::Varbit(max) = &d.ty {
                total += max;
                out.push(format!("{bp}.push_bytes({}.used());", self.place(ctx, &d)?));
                continue;
            }
            if self.is_wide(&d.ty) {
                // Pushed in pieces of at most 128 bits, most significant
                // first: the packer concatenates.
                let w = self.width(&d.ty);
                total += w;
                let t = ctx.tmp("wide");
                out.push(format!("let {t} = {};", self.expr(ctx, &d)?));
                let mut hi = w;
                while hi > 0 {
                    let lo = hi.saturating_sub(128);
                    out.push(format!(
                        "{bp}.push({t}.slice_u128({}, {lo}), {});",
                        hi - 1,
                        hi - lo
                    ));
                    hi = lo;
                }
                continue;
            }
            let w = match &d.ty {
                Ty::Bool => 1,
                Ty::Error | Ty::Enum(_) => 32,
                t if self.is_bits(t) => self.width(t),
                _ => return bad("not supported yet: this field list member", Some(d.span)),
            };
            total += w;
            let v = self.expr(ctx, &d)?;
            let v = if self.is_bits(&d.ty) || d.ty == Ty::Bool {
                v
            } else {
                format!("({v} as u128)")
            };
            let v = if d.ty == Ty::Bool {
                format!("({v} as u128)")
            } else {
                v
            };
            out.push(format!("{bp}.push({v}, {w});"));
        }
        if total > 256 * 8 {
            return bad(
                "field list longer than 256 bytes",
                data.first().map(|d| d.span),
            );
        }
        Ok(bp)
    }

    /// Packs a field list whose members are all bit strings of whole bytes
    /// (at most 128 bits each) into a byte array of exactly its size, one
    /// big-endian store per member; `None` for any other list (the caller
    /// falls back to [`Self::pack`]). Returns the array's name.
    pub(super) fn pack_bytes(
        &self,
        ctx: &Ctx<'_>,
        data: &[Expr],
        out: &mut Vec<String>,
    ) -> Result<Option<String>, BackError> {
        let mut flat = Vec::new();
        self.flatten(data, &mut flat);
        let whole_bytes = |d: &Expr| {
            self.is_bits(&d.ty) && {
                let w = self.width(&d.ty);
                w > 0 && w <= 128 && w.is_multiple_of(8)
            }
        };
        if flat.is_empty() || !flat.iter().all(whole_bytes) {
            return Ok(None);
        }
        let total: u32 = flat.iter().map(|d| self.width(&d.ty) / 8).sum();
        let hb = ctx.tmp("hb");
        let mut lines = vec![format!("let mut {hb} = [0u8; {total}];")];
        let mut at = 0;
        for d in &flat {
            let n = self.width(&d.ty) / 8;
            let ty = native_uint(n * 8);
            let size = match ty {
                "u8" => 1,
                "u16" => 2,
                "u32" => 4,
                "u64" => 8,
                _ => 16,
            };
            lines.push(format!(
                "{hb}[{at}..{}].copy_from_slice(&({} as {ty}).to_be_bytes()[{}..]);",
                at + n,
                self.expr(ctx, d)?,
                size - n
            ));
            at += n;
        }
        out.extend(lines);
        Ok(Some(hb))
    }

    /// Flattens lists and structs/headers into scalar members, in order.
    pub(super) fn flatten(&self, data: &[Expr], out: &mut Vec<Expr>) {
        for d in data {
            match (&d.kind, &d.ty) {
                (ExprKind::List(items), _) => self.flatten(items, out),
                // A tuple or list value held in a variable or constant
                // (`list<bit<8>> l = {a, b}; hash(.., l, ..)`): its
                // elements in order, as the list expression it was made
                // from would give them (P4_16 §7.2.10).
                (_, Ty::Tuple(items)) => {
                    let members: Vec<Expr> = items
                        .iter()
                        .enumerate()
                        .map(|(i, t)| Expr {
                            kind: ExprKind::Member(Box::new(d.clone()), i as u32),
                            ty: t.clone(),
                            span: d.span,
                        })
                        .collect();
                    self.flatten(&members, out);
                }
                (_, Ty::Composite(c)) => {
                    let comp = &self.prog.composites[*c];
                    let members: Vec<Expr> = comp
                        .fields
                        .iter()
                        .enumerate()
                        .map(|(i, f)| Expr {
                            kind: ExprKind::Member(Box::new(d.clone()), i as u32),
                            ty: f.ty.clone(),
                            span: d.span,
                        })
                        .collect();
                    self.flatten(&members, out);
                }
                _ => out.push(d.clone()),
            }
        }
    }

    /// `e` as a place when it is one, else its value in parentheses (a
    /// constant header or stack, an initialiser), for reading a field of it.
    fn place_or_value(&self, ctx: &Ctx<'_>, e: &Expr) -> Result<String, BackError> {
        if Self::is_place(e) {
            self.place(ctx, e)
        } else {
            Ok(format!("({})", self.expr(ctx, e)?))
        }
    }

    /// A header stack built from an initialiser's elements (`ty` is the
    /// stack's type), its `nextIndex` the Rust expression `next`: 0 for a
    /// new value, the target's own when assigned (p4c assigns such an
    /// initialiser element by element, which leaves `nextIndex` alone).
    pub(super) fn stack_value(
        &self,
        ctx: &Ctx<'_>,
        items: &[Expr],
        ty: &Ty,
        next: &str,
    ) -> Result<String, BackError> {
        let Ty::Stack(elem, n) = ty else {
            return bad("internal: a stack initialiser of another type", None);
        };
        let mut parts = Vec::new();
        for it in items {
            parts.push(self.to_native(&self.expr(ctx, it)?, elem)?);
        }
        // Parenthesised: a struct literal may not stand bare in an `if`.
        Ok(format!(
            "(Stack::<{}, {n}> {{ elems: [{}], next: {next} }})",
            self.rust_ty(elem)?,
            parts.join(", ")
        ))
    }

    pub(super) fn assign_native(
        &self,
        ctx: &Ctx<'_>,
        lhs: &Expr,
        value_u128: &str,
    ) -> Result<String, BackError> {
        // A slice written by an extern's `out` argument (`r.read(x[7:0], i)`,
        // `hash(x[15:0], ..)`): the whole takes the new bits and keeps the
        // others (P4_16 §8.6 slices are l-values), inner slices first.
        if let ExprKind::Slice(base, hi, lo) = &lhs.kind {
            let whole = self.expr(ctx, base)?;
            let new = if self.is_wide(&base.ty) {
                let part = if self.is_wide(&lhs.ty) {
                    value_u128.to_string()
                } else {
                    format!("{}::from_u128({value_u128})", wide_path(128))
                };
                format!("({whole}).set_slice({hi}, {lo}, {part})")
            } else {
                let field = p4_target::bits::mask(hi - lo + 1) << lo;
                format!(
                    "((({whole}) & !{field:#x}u128) | ((({value_u128}) << {lo}) & {field:#x}u128))"
                )
            };
            return self.assign_native(ctx, base, &new);
        }
        let p = self.place(ctx, lhs)?;
        let line = format!("{p} = {};", self.to_native(value_u128, &lhs.ty)?);
        let mut guards = Vec::new();
        self.index_guards(ctx, lhs, &mut guards)?;
        Ok(if guards.is_empty() {
            line
        } else {
            format!("if {} {{ {line} }}", guards.join(" && "))
        })
    }

    /// Conditions under which the header stack elements an l-value names
    /// exist: writing `hs[i]` with a run-time `i` outside `0..hs.size`
    /// changes nothing (P4_16 §8.18, as BMv2 does), where reading it clamps
    /// the index (an unspecified value). Indices that could have side effects
    /// (calls) are left to the clamp, so they are evaluated once.
    fn index_guards(
        &self,
        ctx: &Ctx<'_>,
        e: &Expr,
        out: &mut Vec<String>,
    ) -> Result<(), BackError> {
        match &e.kind {
            ExprKind::Member(b, _) | ExprKind::StackLast(b) | ExprKind::StackNext(b) => {
                self.index_guards(ctx, b, out)
            }
            ExprKind::Index(b, i) => {
                self.index_guards(ctx, b, out)?;
                if !matches!(i.kind, ExprKind::Int(_)) && Self::is_pure(i) {
                    let n = self.stack_len(&b.ty);
                    out.push(format!("(({}) as u128) < {n}", self.expr(ctx, i)?));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Whether evaluating `e` twice is the same as once (no calls).
    fn is_pure(e: &Expr) -> bool {
        !visit::any_node(e, &|e| {
            matches!(
                e.kind,
                ExprKind::Call(_)
                    | ExprKind::TableHit(..)
                    | ExprKind::Lookahead
                    | ExprKind::Default
                    | ExprKind::List(_)
                    | ExprKind::StackNext(_)
                    | ExprKind::StackLast(_)
            )
        })
    }
}
