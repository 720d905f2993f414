//! Header, struct and union types: Rust structs of native integers with
//! `extract`/`emit` (P4_16 §7.2.2 headers, §7.2.4 unions, §12.8 extraction).
//! A struct field of a header is a nested Rust struct; on the wire its
//! scalar leaves follow one another in declaration order ([`leaf_ident`]).

use std::collections::BTreeSet;

use super::*;

impl Gen<'_> {
    pub(super) fn types(&mut self) -> Result<(), BackError> {
        for (h, e) in self.prog.enums.iter() {
            let name = self.names.enums[h.index()].clone();
            let ty = match &e.repr {
                Some(r) => self.rust_ty(r)?,
                None => "u32".into(),
            };
            self.w.line(format!("/// Members of `enum {}`.", e.name));
            self.w.open(format!("pub mod {name} {{"));
            for (m, v) in &e.members {
                self.w.line(format!("pub const {}: {ty} = {v};", escape(m)));
            }
            self.w.close("}");
            self.w.line("");
        }
        for (h, c) in self.prog.composites.iter() {
            if self.is_std_meta(h) {
                continue;
            }
            let name = self.names.composites[h.index()].clone();
            let kind = match c.kind {
                CompositeKind::Header => "header",
                CompositeKind::Union => "header_union",
                CompositeKind::Struct => "struct",
            };
            self.w.line(format!("/// P4 `{kind} {}`.", c.name));
            let p4_equality = c.kind == CompositeKind::Header && self.compared.contains(&h.index());
            if p4_equality {
                self.w.line("#[derive(Clone, Copy, Debug, Default)]");
            } else {
                self.w
                    .line("#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]");
            }
            self.w.open(format!("pub struct {name} {{"));
            if c.kind == CompositeKind::Header {
                self.w.line("pub valid: bool,");
            }
            if self.wire_kept.contains(&h.index()) {
                self.w.line("/// Where it was extracted (see `WireAt`).");
                self.w.line("pub wire__: ::p4_target::support::WireAt,");
            }
            for f in &c.fields {
                let t = match self.rust_ty(&f.ty) {
                    Ok(t) => t,
                    Err(mut e) => {
                        e.span = Some(f.span);
                        return Err(e);
                    }
                };
                self.w.line(format!("pub {}: {t},", field_ident(&f.name)));
            }
            self.w.close("}");
            self.w.line("");
            if p4_equality {
                self.header_eq_impl(h);
            }
            match c.kind {
                CompositeKind::Header => {
                    self.header_impl(h)?;
                    self.header_trace_impl(h)?;
                }
                CompositeKind::Union => self.union_impl(h)?,
                CompositeKind::Struct => {}
            }
        }
        Ok(())
    }

    /// `PartialEq` as P4_16 §8.17 defines header equality: two headers are
    /// equal when both are invalid, or both are valid with equal fields.
    /// The derived one would also compare an invalid header's stale fields.
    /// Unions, stacks and structs holding the header derive theirs from it.
    fn header_eq_impl(&mut self, h: Handle<Composite>) {
        let c = &self.prog.composites[h];
        let name = &self.names.composites[h.index()];
        let fields: Vec<String> = c
            .fields
            .iter()
            .map(|f| {
                let f = field_ident(&f.name);
                format!("self.{f} == other.{f}")
            })
            .collect();
        let body = match fields.as_slice() {
            [] => "self.valid == other.valid".to_string(),
            [one] => format!("self.valid == other.valid && (!self.valid || {one})"),
            _ => format!(
                "self.valid == other.valid && (!self.valid || ({}))",
                fields.join(" && ")
            ),
        };
        let w = &mut self.w;
        w.open(format!("impl PartialEq for {name} {{"));
        w.open("fn eq(&self, other: &Self) -> bool {");
        w.line(body);
        w.close("}");
        w.close("}");
        w.line(format!("impl Eq for {name} {{}}"));
        w.line("");
    }

    pub(super) fn header_impl(&mut self, h: Handle<Composite>) -> Result<(), BackError> {
        if self.prog.composites[h].varbit().is_some() {
            return self.varbit_header_impl(h);
        }
        let c = &self.prog.composites[h];
        let name = &self.names.composites[h.index()];
        let kept = self.wire_kept.contains(&h.index());
        let patched = self.patched.get(&h.index());
        let undecoded = self.undecoded_leaves(h);
        let bits = c.header_bits(self.prog);
        if !bits.is_multiple_of(8) {
            return bad(
                format!(
                    "header `{}` is {bits} bits, not a whole number of bytes",
                    c.name
                ),
                None,
            );
        }
        let w = &mut self.w;
        w.open(format!("impl {name} {{"));
        w.line(format!("pub const BITS: usize = {bits};"));
        w.line(format!("pub const BYTES: usize = {};", bits / 8));
        w.line("/// Extracts the header at the cursor; `false` if the packet is too short.");
        w.line("#[inline]");
        w.open("pub fn extract(&mut self, p: &mut PacketIn<'_>) -> bool {");
        w.open("if p.data.len() * 8 < p.off_bits + Self::BITS {");
        w.line("return false;");
        w.close("}");
        // Struct fields are laid out flattened: one entry per scalar leaf,
        // named by its Rust path from the header (`s.f`).
        // `bit<0>`/`int<0>` fields take no bits on the wire: extract sets
        // them to their only value and emit skips them.
        let leaves = c.leaves(self.prog);
        let zero_width: Vec<String> = leaves
            .iter()
            .filter(|(_, ty)| matches!(ty, Ty::Bit(0) | Ty::Int(0)))
            .map(|(path, _)| leaf_ident(path))
            .collect();
        let fields: Vec<(String, u32, bool)> = leaves
            .iter()
            .filter(|(_, ty)| !matches!(ty, Ty::Bit(0) | Ty::Int(0)))
            .map(|(path, ty)| {
                (
                    leaf_ident(path),
                    ty.scalar_width(self.prog).unwrap_or(0),
                    matches!(ty, Ty::Bool),
                )
            })
            .collect();
        let chunks = header_chunks(&fields.iter().map(|f| f.1).collect::<Vec<_>>());
        if let Some(chunks) = &chunks {
            // Byte-aligned cursor (the usual case): one load per chunk,
            // none for a chunk of fields left undecoded.
            if kept {
                w.open("if let Some(wire) = ::p4_target::support::WireAt::aligned(p.off_bits) {");
                w.line("self.wire__ = wire;");
            } else {
                w.open("if p.off_bits % 8 == 0 {");
            }
            w.line("let d = &p.data[p.off_bits / 8..p.off_bits / 8 + Self::BYTES];");
            for ch in chunks {
                let decoded: Vec<_> = ch
                    .fields
                    .iter()
                    .filter(|(i, _, _)| !undecoded.contains(&fields[*i].0))
                    .collect();
                if decoded.is_empty() {
                    continue;
                }
                let (word, nbytes) = ch.word();
                w.open("{");
                w.line(format!("let mut a = [0u8; {nbytes}];"));
                w.line(format!(
                    "a[{}..].copy_from_slice(&d[{}..{}]);",
                    nbytes - ch.bytes,
                    ch.byte_offset,
                    ch.byte_offset + ch.bytes
                ));
                w.line(format!("let w = {word}::from_be_bytes(a);"));
                for &&(i, shift, width) in &decoded {
                    let (ident, _, is_bool) = &fields[i];
                    let m = mask_literal(width);
                    let v = if *is_bool {
                        format!("(w >> {shift}) & 1 != 0")
                    } else {
                        format!("((w >> {shift}) & {m}) as {}", native_uint(width))
                    };
                    w.line(format!("self.{ident} = {v};"));
                }
                w.close("}");
            }
            for z in &zero_width {
                w.line(format!("self.{z} = 0;"));
            }
            w.line("self.valid = true;");
            w.line("p.off_bits += Self::BITS;");
            w.line("return true;");
            w.close("}");
        }
        if kept {
            w.line("self.wire__ = ::p4_target::support::WireAt::at_bits(p.off_bits);");
        }
        w.line("let d = p.data;");
        w.line("let o = p.off_bits;");
        let mut off = 0;
        for (ident, fw, is_bool) in &fields {
            let read = format!("::p4_target::packet::read_bits(d, o + {off}, {fw})");
            let v = if *fw > 128 {
                format!("{}::read_bits(d, o + {off}, {fw})", wide_path(*fw))
            } else if *is_bool {
                format!("{read} != 0")
            } else {
                let n = native_uint(*fw);
                if n == "u128" {
                    read
                } else {
                    format!("{read} as {n}")
                }
            };
            w.line(format!("self.{ident} = {v};"));
            off += fw;
        }
        for z in &zero_width {
            w.line(format!("self.{z} = 0;"));
        }
        w.line("self.valid = true;");
        w.line("p.off_bits += Self::BITS;");
        w.line("true");
        w.close("}");
        w.line("/// Emits the header's bytes to `out` if it is valid.");
        w.line("#[inline]");
        w.open("pub fn emit(&self, out: &mut PacketOut<'_>) {");
        w.open("if !self.valid {");
        w.line("return;");
        w.close("}");
        if kept {
            // Its bytes as parsed, with the fields statements may write
            // patched over them; packed from its fields only if it was not
            // extracted from a byte boundary (every field decoded then).
            match patched {
                Some(written) => {
                    w.open("if let Some(d) = out.wire::<{ Self::BYTES }>(self.wire__) {");
                    field_patches(w, c, self.prog, written);
                }
                None => w.open("if out.wire::<{ Self::BYTES }>(self.wire__).is_some() {"),
            }
            w.line("return;");
            w.close("}");
        }
        w.line("let mut d = [0u8; Self::BYTES];");
        if let Some(chunks) = &chunks {
            // Each chunk's fields are shifted into one word, stored once.
            for ch in chunks {
                let (word, nbytes) = ch.word();
                let parts: Vec<String> = ch
                    .fields
                    .iter()
                    .map(|&(i, shift, width)| {
                        format!(
                            "((self.{} as {word}) & {}) << {shift}",
                            fields[i].0,
                            mask_literal(width)
                        )
                    })
                    .collect();
                w.line(format!(
                    "d[{}..{}].copy_from_slice(&({}).to_be_bytes()[{}..]);",
                    ch.byte_offset,
                    ch.byte_offset + ch.bytes,
                    parts.join(" | "),
                    nbytes - ch.bytes
                ));
            }
        } else {
            let mut off = 0;
            for (ident, fw, _) in &fields {
                w.line(if *fw > 128 {
                    format!("self.{ident}.write_bits(&mut d, {off}, {fw});")
                } else {
                    format!(
                        "::p4_target::packet::write_bits(&mut d, {off}, {fw}, self.{ident} as u128);"
                    )
                });
                off += fw;
            }
        }
        w.line("out.put(&d);");
        w.close("}");
        w.close("}");
        w.line("");
        Ok(())
    }

    /// The leaves (as [`leaf_ident`]s) of header type `h` that the
    /// byte-aligned `extract` leaves undecoded ([`Gen::undecoded`]).
    pub(super) fn undecoded_leaves(&self, h: Handle<Composite>) -> BTreeSet<String> {
        let Some(fields) = self.undecoded.get(&h.index()) else {
            return BTreeSet::new();
        };
        let c = &self.prog.composites[h];
        let tops: BTreeSet<&str> = fields
            .iter()
            .filter_map(|&i| c.fields.get(i as usize))
            .map(|f| f.name.as_str())
            .collect();
        c.leaves(self.prog)
            .iter()
            .filter(|(path, _)| tops.contains(path[0].as_str()))
            .map(|(path, _)| leaf_ident(path))
            .collect()
    }

    /// A header with a varbit field: fields after it sit at run-time offsets.
    pub(super) fn varbit_header_impl(&mut self, h: Handle<Composite>) -> Result<(), BackError> {
        let c = &self.prog.composites[h];
        let name = &self.names.composites[h.index()];
        let fixed = c.fixed_bits(self.prog);
        let Some((_, max)) = c.varbit() else {
            return bad("internal: no varbit field", None);
        };
        if c.leaves(self.prog).iter().any(|(_, t)| self.is_wide(t)) {
            return self.refuse_wide("a field of a header with a varbit field", None);
        }
        if !(fixed + max).is_multiple_of(8) || !fixed.is_multiple_of(8) {
            return bad(
                format!("header `{}` is not a whole number of bytes", c.name),
                None,
            );
        }
        const E: &str = "::p4_target::v1model::error_code";
        let w = &mut self.w;
        w.open(format!("impl {name} {{"));
        w.line(format!("pub const FIXED_BITS: usize = {fixed};"));
        w.line(format!("pub const MAX_VAR_BITS: u32 = {max};"));
        w.line("/// Extracts the header with `var_bits` bits in its varbit field.");
        w.open("pub fn extract_var(&mut self, p: &mut PacketIn<'_>, var_bits: u32) -> Result<(), u32> {");
        w.open("if var_bits > Self::MAX_VAR_BITS {");
        w.line(format!("return Err({E}::HEADER_TOO_SHORT);"));
        w.close("}");
        w.open("if var_bits % 8 != 0 {");
        w.line(format!("return Err({E}::PARSER_INVALID_ARGUMENT);"));
        w.close("}");
        w.open("if p.data.len() * 8 < p.off_bits + Self::FIXED_BITS + var_bits as usize {");
        w.line(format!("return Err({E}::PACKET_TOO_SHORT);"));
        w.close("}");
        w.line("let d = p.data;");
        w.line("let mut o = p.off_bits;");
        let leaves = c.leaves(self.prog);
        for (path, ty) in &leaves {
            let fname = leaf_ident(path);
            match ty {
                Ty::Varbit(_) => {
                    w.line(format!("self.{fname}.len_bits = var_bits;"));
                    w.open("for i in 0..(var_bits / 8) as usize {");
                    w.line(format!(
                        "self.{fname}.bytes[i] = ::p4_target::packet::read_bits(d, o + 8 * i, 8) as u8;"
                    ));
                    w.close("}");
                    w.line("o += var_bits as usize;");
                }
                Ty::Bit(0) | Ty::Int(0) => w.line(format!("self.{fname} = 0;")),
                _ => {
                    let fw = ty.scalar_width(self.prog).unwrap_or(0);
                    let read = format!("::p4_target::packet::read_bits(d, o, {fw})");
                    let v = match ty {
                        Ty::Bool => format!("{read} != 0"),
                        _ => format!("{read} as {}", native_uint(fw)),
                    };
                    w.line(format!("self.{fname} = {v};"));
                    w.line(format!("o += {fw};"));
                }
            }
        }
        w.line("self.valid = true;");
        w.line("p.off_bits = o;");
        w.line("Ok(())");
        w.close("}");
        // The validity test inlined where the deparser emits, the packing
        // out of line: most packets carry no such header (IPv4 options).
        w.line("/// Emits the header's bytes to `out` if it is valid.");
        w.line("#[inline]");
        w.open("pub fn emit(&self, out: &mut PacketOut<'_>) {");
        w.open("if self.valid {");
        w.line("self.emit_valid(out);");
        w.close("}");
        w.close("}");
        w.line("/// [`Self::emit`] of a valid header.");
        w.line("#[inline(never)]");
        w.open("fn emit_valid(&self, out: &mut PacketOut<'_>) {");
        let vname = c
            .fields
            .iter()
            .find(|f| matches!(f.ty, Ty::Varbit(_)))
            .map(|f| field_ident(&f.name))
            .unwrap_or_default();
        w.line(format!("let var = self.{vname}.used().len() * 8;"));
        w.line(format!("let mut buf = [0u8; {}];", (fixed + max) / 8));
        w.line("let d = &mut buf[..(Self::FIXED_BITS + var) / 8];");
        w.line("let mut o = 0usize;");
        for (path, ty) in &leaves {
            let fname = leaf_ident(path);
            match ty {
                Ty::Varbit(_) => {
                    w.open(format!("for &b in self.{fname}.used() {{"));
                    w.line("::p4_target::packet::write_bits(d, o, 8, b as u128);");
                    w.line("o += 8;");
                    w.close("}");
                }
                Ty::Bit(0) | Ty::Int(0) => {}
                _ => {
                    let fw = ty.scalar_width(self.prog).unwrap_or(0);
                    w.line(format!(
                        "::p4_target::packet::write_bits(d, o, {fw}, self.{fname} as u128);"
                    ));
                    w.line(format!("o += {fw};"));
                }
            }
        }
        w.line("out.put(d);");
        w.close("}");
        w.close("}");
        w.line("");
        Ok(())
    }

    pub(super) fn union_impl(&mut self, h: Handle<Composite>) -> Result<(), BackError> {
        let c = &self.prog.composites[h];
        let name = &self.names.composites[h.index()];
        let w = &mut self.w;
        w.open(format!("impl {name} {{"));
        w.open("pub fn is_valid(&self) -> bool {");
        let parts: Vec<String> = c
            .fields
            .iter()
            .map(|f| format!("self.{}.valid", field_ident(&f.name)))
            .collect();
        w.line(if parts.is_empty() {
            "false".to_string()
        } else {
            parts.join(" || ")
        });
        w.close("}");
        w.open("pub fn invalidate(&mut self) {");
        for f in &c.fields {
            w.line(format!("self.{}.valid = false;", field_ident(&f.name)));
        }
        w.close("}");
        w.open("pub fn emit(&self, out: &mut PacketOut<'_>) {");
        for f in &c.fields {
            w.line(format!("self.{}.emit(out);", field_ident(&f.name)));
        }
        w.close("}");
        w.close("}");
        w.line("");
        Ok(())
    }
}

/// The Rust path of a header leaf from the header (`s.f` for field `f` of
/// struct field `s`).
pub(super) fn leaf_ident(path: &[String]) -> String {
    path.iter()
        .map(|n| field_ident(n))
        .collect::<Vec<_>>()
        .join(".")
}

/// The statements that write the fields of header `c` whose top-level
/// indices are in `written` over its wire bytes `d` (a `&mut [u8; N]` of the
/// header's length), leaving every other bit alone. Adjacent written fields
/// that fit 8 bytes together are one run: stored outright when the run
/// starts and ends on byte boundaries, else read, masked and stored back;
/// a field wider than that is written bit-wise.
fn field_patches(out: &mut CodeWriter, c: &Composite, prog: &Program, written: &BTreeSet<u32>) {
    let tops: BTreeSet<&str> = written
        .iter()
        .filter_map(|&i| c.fields.get(i as usize))
        .map(|f| f.name.as_str())
        .collect();
    // (ident, bit offset, width, wide) of each written leaf with bits.
    let mut leaves = Vec::new();
    let mut off = 0u32;
    for (path, ty) in c.leaves(prog) {
        let width = ty.scalar_width(prog).unwrap_or(0);
        if width > 0 && tops.contains(path[0].as_str()) {
            leaves.push((leaf_ident(&path), off, width, width > 128));
        }
        off += width;
    }
    let mut runs: Vec<Vec<(String, u32, u32, bool)>> = Vec::new();
    for leaf in leaves {
        let joins = runs.last().is_some_and(|run| {
            let (_, o, w, _) = run.last().expect("runs are never empty");
            let start = run[0].1;
            o + w == leaf.1 && (leaf.1 + leaf.2).div_ceil(8) - start / 8 <= 8
        });
        if joins {
            runs.last_mut().expect("joins").push(leaf);
        } else {
            runs.push(vec![leaf]);
        }
    }
    for run in runs {
        let names: Vec<&str> = run.iter().map(|l| l.0.as_str()).collect();
        out.line(format!("// {}", names.join(", ")));
        let start = run[0].1;
        let end = run.last().map(|l| l.1 + l.2).unwrap_or(start);
        let (a, b) = ((start / 8) as usize, end.div_ceil(8) as usize);
        if b - a > 8 {
            for (ident, off, width, wide) in &run {
                out.line(if *wide {
                    format!("self.{ident}.write_bits(d, {off}, {width});")
                } else {
                    format!(
                        "::p4_target::packet::write_bits(d, {off}, {width}, self.{ident} as u128);"
                    )
                });
            }
            continue;
        }
        let n = b - a;
        let cover_end = b as u32 * 8;
        let parts: Vec<String> = run
            .iter()
            .map(|(ident, off, width, _)| {
                format!(
                    "((self.{ident} as u64) & {}) << {}",
                    mask_literal(*width),
                    cover_end - off - width
                )
            })
            .collect();
        let value = parts.join(" | ");
        if start.is_multiple_of(8) && end.is_multiple_of(8) {
            out.line(format!(
                "d[{a}..{b}].copy_from_slice(&({value}).to_be_bytes()[{}..]);",
                8 - n
            ));
        } else {
            let mask = mask_literal(end - start);
            out.open("{");
            out.line("let mut w = [0u8; 8];");
            out.line(format!("w[{}..].copy_from_slice(&d[{a}..{b}]);", 8 - n));
            out.line(format!(
                "let keep = u64::from_be_bytes(w) & !({mask}u64 << {});",
                cover_end - end
            ));
            out.line(format!(
                "d[{a}..{b}].copy_from_slice(&(keep | {value}).to_be_bytes()[{}..]);",
                8 - n
            ));
            out.close("}");
        }
    }
}
