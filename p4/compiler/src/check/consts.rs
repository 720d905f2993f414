//! Compile-time constants: folded values and widths, `const` declarations,
//! and default values of parameters.

use super::{Checker, MAX_WIDTH, Sym, codes, expr};
use crate::front::ast;
use crate::ir::{self, Ty};

impl Checker {
    /// Evaluates a width or size expression to a constant.
    pub(crate) fn const_u32(&mut self, e: &ast::Expr, what: &str) -> Option<u32> {
        let v = self.const_number(e, what)?;
        if v < 0 || v > u32::MAX as i128 {
            self.error(
                codes::OVERFLOW,
                e.span,
                format!("{what} {v} is out of range"),
            );
            return None;
        }
        Some(v as u32)
    }

    /// Evaluates a compile-time integer expression.
    pub(crate) fn const_value(&mut self, e: &ast::Expr) -> Option<i128> {
        self.const_value_of(e, None)
    }

    /// Evaluates a compile-time number (a width, a size or a slice bound): a
    /// boolean or a string is a type error there, as in p4c.
    pub(super) fn const_number(&mut self, e: &ast::Expr, what: &str) -> Option<i128> {
        self.const_value_of(e, Some(what))
    }

    /// [`Self::const_value`]; `number` names what must not be a boolean.
    fn const_value_of(&mut self, e: &ast::Expr, number: Option<&str>) -> Option<i128> {
        let before = self.diags.len();
        let te = self.expr_any(e)?;
        match te {
            expr::TE::Inf(v) => Some(v),
            expr::TE::Typed(ex) => match (&ex.kind, &ex.ty) {
                // A string literal is lowered to `Int(0)` of type string, so
                // it is refused by its type before its value is read
                // (p4c's expr-bitslice-high-unsupported-type, `x["tmp":0]`).
                (_, Ty::Bool | Ty::Str) if number.is_some() => {
                    let ty = self.ty_name(&ex.ty);
                    self.error_label(
                        codes::TYPE_MISMATCH,
                        e.span,
                        format!("the {} must be a number, not a {ty}", number.unwrap_or("")),
                        format!("a {ty}"),
                    );
                    None
                }
                (ir::ExprKind::Int(v), Ty::Int(w)) => Some(p4_target::bits::sext(*v, *w)),
                (ir::ExprKind::Int(v), _) => Some(*v as i128),
                (ir::ExprKind::Bool(b), _) => Some(*b as i128),
                _ => {
                    if self.diags.len() == before {
                        self.error_label(
                            codes::NOT_CONSTANT,
                            e.span,
                            "a compile-time constant is required here",
                            "not a constant",
                        );
                    }
                    None
                }
            },
        }
    }

    /// The width of a `bit<W>` or `int<W>`: `0..=`[`MAX_WIDTH`] (P4_16
    /// §7.1.6.2, §7.1.6.3: `bit<0>` and `int<0>` hold only the value 0).
    pub(crate) fn width(&mut self, e: &ast::Expr) -> Option<u32> {
        let w = self.const_u32(e, "width")?;
        if w > MAX_WIDTH {
            self.error_label(
                codes::BAD_WIDTH,
                e.span,
                format!("width {w} is not supported: widths must be 0..={MAX_WIDTH} bits"),
                "this width",
            );
            return None;
        }
        Some(w)
    }

    /// Declares a `const`; returns its value when it is a number or a
    /// boolean (what [`ir::Program::constants`] records).
    pub(crate) fn const_decl(&mut self, c: &ast::ConstDecl) -> Option<ir::ConstValue> {
        if matches!(c.ty.kind, ast::TypeKind::Int) {
            let v = self.const_value(&c.value)?;
            self.declare(&c.name, Sym::IntConst(v));
            return Some(ir::ConstValue::Integer(v));
        }
        let e = if let ast::TypeKind::List(elem) = &c.ty.kind {
            // `const list<T> L = {..};` is a tuple of as many `T` (§7.2.10).
            self.list_decl(elem, Some(&c.value), c.value.span)?.1
        } else {
            let ty = self.ty(&c.ty)?;
            self.expr(&c.value, Some(&ty))?
        };
        // P4_16 §7.6: a constant of a `type`-declared type is of that type,
        // and takes a value of another only through a cast.
        self.check_declared_nominal(&c.ty, &e, c.value.span);
        let nominal = self.nominal_of_type(&c.ty);
        // Struct, header and tuple constants (`const S c = {a = 1, b = 2};`)
        // are compile-time known when each of their fields is (P4_16 §8.17).
        fn is_const(e: &ir::Expr) -> bool {
            match &e.kind {
                ir::ExprKind::Int(_)
                | ir::ExprKind::WideInt(_)
                | ir::ExprKind::Bool(_)
                | ir::ExprKind::ErrorCode(_)
                | ir::ExprKind::EnumMember(..) => true,
                // `{#}`: an invalid header or union is as known as `0`.
                ir::ExprKind::Default => matches!(e.ty, Ty::Composite(_)),
                ir::ExprKind::List(items) => {
                    !matches!(e.ty, Ty::Bit(_) | Ty::Int(_)) && items.iter().all(is_const)
                }
                _ => false,
            }
        }
        if !is_const(&e) {
            self.error_label(
                codes::NOT_CONSTANT,
                c.value.span,
                format!(
                    "the value of constant `{}` is not a compile-time constant",
                    c.name.name
                ),
                "not constant",
            );
            return None;
        }
        if c.name.name == "__v1model_version" {
            self.check_v1model_version(&e, c.value.span);
        }
        let value = match (&e.kind, &e.ty) {
            (ir::ExprKind::Bool(b), _) => Some(ir::ConstValue::Bool(*b)),
            // Program constants are exported as native integers: wide ones
            // stay inside the program.
            (ir::ExprKind::Int(v), ty) if ty.scalar_width(&self.prog).is_some_and(|w| w <= 128) => {
                let signed = ty.is_signed(&self.prog);
                ty.scalar_width(&self.prog).map(|width| {
                    if signed {
                        ir::ConstValue::Int {
                            width,
                            value: p4_target::bits::sext(*v, width),
                        }
                    } else {
                        ir::ConstValue::Bit { width, value: *v }
                    }
                })
            }
            _ => None,
        };
        self.declare(&c.name, Sym::Const(e, Some(nominal)));
        value
    }

    /// A parameter's default value: of the parameter's type and known at
    /// compile time (P4_16 §6.8.3; p4c's issue3316 gives a function call,
    /// "expression must be a compile-time constant"). The checked value,
    /// when it is one.
    pub(crate) fn default_value(&mut self, d: &ast::Expr, ty: &Ty) -> Option<ir::Expr> {
        let x = self.expr(d, Some(ty))?;
        fn known(x: &ir::Expr) -> bool {
            use ir::ExprKind as K;
            match &x.kind {
                K::Int(_)
                | K::WideInt(_)
                | K::Bool(_)
                | K::ErrorCode(_)
                | K::EnumMember(..)
                | K::Default => true,
                K::List(xs) => xs.iter().all(known),
                K::Cast(e) => known(e),
                _ => false,
            }
        }
        if !known(&x) {
            self.error_label(
                codes::NOT_CONSTANT,
                d.span,
                "a default value must be a compile-time constant",
                "not a constant",
            );
            return None;
        }
        Some(x)
    }

    /// A default value stands in for an argument that is read (P4_16
    /// §6.8.2): only `in` and directionless parameters may have one, and
    /// not an `@optional` one, which has no value when left out (p4c's
    /// default-param test).
    pub(crate) fn check_param_defaults(&mut self, params: &[ast::Param]) {
        for p in params {
            let Some(d) = &p.default else { continue };
            let why = if matches!(p.direction, ast::Direction::Out | ast::Direction::InOut) {
                "only `in` and directionless parameters may have a default value"
            } else if ast::find_annotation(&p.annotations, "optional").is_some() {
                "an `@optional` parameter may not also have a default value"
            } else {
                continue;
            };
            self.error_label(codes::NOT_ALLOWED_HERE, d.span, why, "default value");
        }
    }
}
