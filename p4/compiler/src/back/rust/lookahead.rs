//! `lookahead<T>()` (P4_16 §12.8.4): the next bits of the packet read
//! without moving the cursor, split into a struct's or tuple's leaves.

use super::*;

impl Gen<'_> {
    /// `lookahead<S>()` of a struct or tuple of scalars (nested ones too;
    /// at most 128 bits, checked): one read, split into the leaves, the
    /// first in the high bits.
    pub(super) fn lookahead_struct(&self, ty: &Ty) -> Result<String, BackError> {
        let total = self.lookahead_width(ty);
        let mut out = format!(
            "{{ let v__ = packet__.lookahead({total}).ok_or(::p4_target::v1model::error_code::PACKET_TOO_SHORT)?; \
             let mut s__ = <{} as Default>::default();",
            self.rust_ty(ty)?
        );
        let mut shift = total;
        self.lookahead_leaves(ty, "s__", &mut shift, &mut out)?;
        out.push_str(" s__ }");
        Ok(out)
    }

    /// Whether every leaf of struct or tuple `ty` is a scalar.
    pub(super) fn scalar_leaves(&self, ty: &Ty) -> bool {
        match ty {
            Ty::Composite(c) if self.prog.composites[*c].kind == CompositeKind::Struct => {
                self.prog.composites[*c]
                    .fields
                    .iter()
                    .all(|f| self.scalar_leaves(&f.ty))
            }
            Ty::Tuple(items) => items.iter().all(|t| self.scalar_leaves(t)),
            Ty::Bit(_) | Ty::Int(_) | Ty::Bool | Ty::SerEnum(_) => true,
            _ => false,
        }
    }

    /// `lookahead<S>()` of a struct or tuple holding headers or stacks of
    /// them (or scalars of more than 128 bits in all): a copy of the
    /// packet cursor reads each member in turn, as `extract` would lay
    /// them out; headers read become valid. A stack's `nextIndex` stays 0:
    /// the value is its elements.
    pub(super) fn lookahead_by_member(&self, ty: &Ty) -> Result<String, BackError> {
        let mut out = format!(
            "{{ let mut c__ = PacketIn {{ data: packet__.data, off_bits: packet__.off_bits }}; \
             let mut s__ = <{} as Default>::default();",
            self.rust_ty(ty)?
        );
        self.lookahead_members(ty, "s__", &mut out)?;
        out.push_str(" s__ }");
        Ok(out)
    }

    /// Reads the members of `place` (of struct or tuple type `ty`) from
    /// the cursor `c__`.
    fn lookahead_members(&self, ty: &Ty, place: &str, out: &mut String) -> Result<(), BackError> {
        const SHORT: &str = "::p4_target::v1model::error_code::PACKET_TOO_SHORT";
        let fields = self.lookahead_member_types(ty)?;
        for (i, fty) in fields.iter().enumerate() {
            let sub = format!("{place}.{}", self.field_name(ty, i as u32)?);
            match fty {
                Ty::Composite(c) if self.prog.composites[*c].kind == CompositeKind::Header => {
                    out.push_str(&format!(
                        " if !{sub}.extract(&mut c__) {{ return Err({SHORT}); }}"
                    ));
                }
                Ty::Stack(_, n) => {
                    for k in 0..*n {
                        out.push_str(&format!(
                            " if !{sub}.elems[{k}].extract(&mut c__) {{ return Err({SHORT}); }}"
                        ));
                    }
                }
                Ty::Composite(_) | Ty::Tuple(_) => self.lookahead_members(fty, &sub, out)?,
                _ => {
                    let w = self.width(fty);
                    let bits = format!("c__.lookahead({w}).ok_or({SHORT})?");
                    let value = if *fty == Ty::Bool {
                        format!("({bits} != 0)")
                    } else {
                        self.to_native(&bits, fty)?
                    };
                    out.push_str(&format!(" {sub} = {value}; c__.off_bits += {w};"));
                }
            }
        }
        Ok(())
    }

    /// The member types of the struct or tuple `lookahead` reads, in order.
    fn lookahead_member_types(&self, ty: &Ty) -> Result<Vec<Ty>, BackError> {
        Ok(match ty {
            Ty::Composite(c) => self.prog.composites[*c]
                .fields
                .iter()
                .map(|f| f.ty.clone())
                .collect(),
            Ty::Tuple(items) => items.clone(),
            _ => return bad("internal: lookahead of a non-struct", None),
        })
    }

    /// Bits of a struct or tuple of scalars as `lookahead` reads it.
    pub(super) fn lookahead_width(&self, ty: &Ty) -> u32 {
        match ty {
            Ty::Composite(c) => self.prog.composites[*c]
                .fields
                .iter()
                .map(|f| self.lookahead_width(&f.ty))
                .sum(),
            Ty::Tuple(items) => items.iter().map(|t| self.lookahead_width(t)).sum(),
            t => self.width(t),
        }
    }

    /// Assigns the leaves of `place` (of type `ty`) from `v__`, whose bits
    /// below `shift` are not taken yet.
    fn lookahead_leaves(
        &self,
        ty: &Ty,
        place: &str,
        shift: &mut u32,
        out: &mut String,
    ) -> Result<(), BackError> {
        let fields = self.lookahead_member_types(ty)?;
        for (i, fty) in fields.iter().enumerate() {
            let sub = format!("{place}.{}", self.field_name(ty, i as u32)?);
            if matches!(fty, Ty::Composite(_) | Ty::Tuple(_)) {
                self.lookahead_leaves(fty, &sub, shift, out)?;
                continue;
            }
            let w = self.width(fty);
            *shift -= w;
            let bits = format!("((v__ >> {shift}) & {})", mask_literal(w));
            let value = if *fty == Ty::Bool {
                format!("({bits} != 0)")
            } else {
                self.to_native(&bits, fty)?
            };
            out.push_str(&format!(" {sub} = {value};"));
        }
        Ok(())
    }
}
