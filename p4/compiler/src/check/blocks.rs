//! Parsers, controls, actions, tables and extern instances (P4_16 spec §12
//! parsers and `select`, §13 controls, §14 tables, v1model externs).
//!
//! Contract: each declaration is turned into its IR form and registered in
//! the enclosing scope; per-table facts that only P4Info needs (size,
//! default action, entries, direct resources) go into
//! [`super::program_info::Facts`]. Parser graphs are checked: `start` must
//! exist, every transition names a declared state, `accept` or `reject`.

mod actions;
mod controls;
mod ctor;
mod entries;
mod instances;
mod parsers;
mod tables;

use super::program_info::NameSpec;
use super::{Checker, Sym, codes};
use crate::diag::Span;
use crate::front::ast;
use crate::ir::{self, Ty};

/// `@name` handling: `@name(".x")` is absolute, `@name("x")` replaces the local name.
pub(crate) fn name_spec(annotations: &[ast::Annotation], local: &str) -> NameSpec {
    let id = explicit_id(annotations);
    match ast::find_annotation(annotations, "name").and_then(|a| a.string_arg()) {
        Some(n) if n.starts_with('.') => NameSpec {
            absolute: true,
            name: n[1..].to_string(),
            id,
        },
        Some(n) => NameSpec {
            absolute: false,
            name: n.to_string(),
            id,
        },
        None => NameSpec {
            absolute: false,
            name: local.to_string(),
            id,
        },
    }
}

/// `@id(n)`, if present and a 32-bit number.
pub(crate) fn explicit_id(annotations: &[ast::Annotation]) -> Option<u32> {
    ast::find_annotation(annotations, "id")
        .and_then(|a| a.int_arg())
        .and_then(|i| u32::try_from(i.value).ok())
}

/// Source text of a key expression as p4c names match fields.
pub(crate) fn expr_text(e: &ast::Expr) -> String {
    match &e.kind {
        ast::ExprKind::Name(p) => format!("{}{}", if p.top_level { "." } else { "" }, p.ident.name),
        ast::ExprKind::Member { base, member } => format!("{}.{}", expr_text(base), member.name),
        ast::ExprKind::Index { base, index } => {
            format!("{}[{}]", expr_text(base), expr_text(index))
        }
        ast::ExprKind::Slice { base, hi, lo, .. } => {
            format!("{}[{}:{}]", expr_text(base), expr_text(hi), expr_text(lo))
        }
        ast::ExprKind::Int(i) => i.raw.clone(),
        ast::ExprKind::Call { callee, args, .. } => {
            let a: Vec<String> = args.iter().map(|a| expr_text(&a.value)).collect();
            format!("{}({})", expr_text(callee), a.join(", "))
        }
        // A value masked with a constant is named after the value, whichever
        // side the constant is on (p4c's table-key naming: `bits` for
        // `bits & 0x3`), so the control plane names the field it matches.
        ast::ExprKind::Binary {
            op: ast::BinaryOp::BitAnd,
            lhs,
            rhs,
        } => match (&lhs.kind, &rhs.kind) {
            (_, ast::ExprKind::Int(_)) => expr_text(lhs),
            (ast::ExprKind::Int(_), _) => expr_text(rhs),
            _ => "key".to_string(),
        },
        _ => "key".to_string(),
    }
}

/// Whether p4c can name a key expression without `@name` (its
/// KeyNameGenerator): a name, a field, a stack element at a nameable index, a slice, a
/// constant, `isValid()` of a nameable header, and a nameable value masked
/// with a constant (`x & 0xff`). Any other key needs `@name`.
pub(crate) fn key_is_nameable(e: &ast::Expr) -> bool {
    let constant = |e: &ast::Expr| matches!(e.kind, ast::ExprKind::Int(_));
    match &e.kind {
        // A boolean constant is taken too: refusing a key p4c may name
        // would cost valid programs.
        ast::ExprKind::Name(_) | ast::ExprKind::Int(_) | ast::ExprKind::Bool(_) => true,
        ast::ExprKind::Member { base, .. } => key_is_nameable(base),
        ast::ExprKind::Index { base, index } => key_is_nameable(base) && key_is_nameable(index),
        ast::ExprKind::Slice { base, .. } => key_is_nameable(base),
        ast::ExprKind::Call { callee, args, .. } => {
            args.is_empty()
                && matches!(&callee.kind, ast::ExprKind::Member { base, member }
                    if member.name == "isValid" && key_is_nameable(base))
        }
        ast::ExprKind::Binary {
            op: ast::BinaryOp::BitAnd,
            lhs,
            rhs,
        } => (constant(rhs) && key_is_nameable(lhs)) || (constant(lhs) && key_is_nameable(rhs)),
        _ => false,
    }
}

/// Bits a register cell of type `ty` takes: a scalar whose value is its
/// bits, or a struct of such (nested structs too); `None` for anything else.
pub(super) fn register_cell_width(ty: &Ty, prog: &ir::Program) -> Option<u32> {
    match ty {
        Ty::Bit(_) | Ty::Int(_) | Ty::Bool | Ty::SerEnum(_) => ty.scalar_width(prog),
        Ty::Composite(c) if prog.composites[*c].kind == ir::CompositeKind::Struct => prog
            .composites[*c]
            .fields
            .iter()
            .map(|f| register_cell_width(&f.ty, prog))
            .sum(),
        _ => None,
    }
}

/// The IR direction of a parameter: a directionless one is read only, as
/// `in` is (P4_16 §6.8).
pub(super) fn direction(d: ast::Direction) -> ir::Direction {
    match d {
        ast::Direction::Out => ir::Direction::Out,
        ast::Direction::InOut => ir::Direction::InOut,
        _ => ir::Direction::In,
    }
}

impl Checker {
    /// Declares parameter `p` of an action or function, of type `ty`, as
    /// the next of the body's variables `vars` (a parameter is the local
    /// its position names); writable unless it is read only.
    pub(super) fn declare_param_var(&mut self, vars: &mut Vec<ir::Var>, p: &ast::Param, ty: Ty) {
        let dir = direction(p.direction);
        let local = ir::VarRef::Local(vars.len() as u32);
        vars.push(ir::Var {
            name: p.name.name.clone(),
            ty: ty.clone(),
            param: Some(dir),
        });
        let sym = Sym::Var(
            local,
            ty,
            dir != ir::Direction::In,
            Some(self.nominal_of_type(&p.ty)),
            self.tuple_nominals(&p.ty),
        );
        self.declare(&p.name, sym);
    }

    fn block_params(&mut self, params: &[ast::Param], packet_type: &str) -> Vec<ir::BlockParam> {
        let mut out = Vec::new();
        for (i, p) in params.iter().enumerate() {
            if let ast::TypeKind::Named { name, .. } = &p.ty.kind
                && (name.ident.name == "packet_in" || name.ident.name == "packet_out")
            {
                if name.ident.name != packet_type {
                    self.error(
                        codes::TYPE_MISMATCH,
                        p.ty.span,
                        format!(
                            "`{}` is not allowed here; expected `{packet_type}`",
                            name.ident.name
                        ),
                    );
                }
                out.push(ir::BlockParam {
                    name: p.name.name.clone(),
                    ty: None,
                    dir: ir::Direction::In,
                    default: None,
                });
                self.declare(&p.name, Sym::Packet(name.ident.name == "packet_out"));
                continue;
            }
            let ty = self.ty(&p.ty);
            let dir = direction(p.direction);
            if let Some(ty) = &ty {
                self.declare(
                    &p.name,
                    Sym::Var(
                        ir::VarRef::BlockParam(i as u32),
                        ty.clone(),
                        dir != ir::Direction::In,
                        Some(self.nominal_of_type(&p.ty)),
                        self.tuple_nominals(&p.ty),
                    ),
                );
            }
            // Only `in` and directionless parameters keep a default
            // (`check_param_defaults` reports the others).
            let default = match (&p.default, &ty) {
                (Some(d), Some(t)) if dir == ir::Direction::In => self.default_value(d, t),
                _ => None,
            };
            out.push(ir::BlockParam {
                name: p.name.name.clone(),
                ty: Some(ty.unwrap_or(Ty::Void)),
                dir,
                default,
            });
        }
        out
    }

    /// Runs `check` in the top-level scope (a block's declaration does not
    /// see the scope it is instantiated from) with `type_params` bound to
    /// `tys` and constructor parameters bound to `values`, then restores
    /// the scope and block being checked.
    fn in_top_scope_with<T>(
        &mut self,
        type_params: &[ast::Ident],
        tys: &[Ty],
        values: Vec<(ast::Ident, Sym)>,
        check: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let top = self.scopes[0].clone();
        let saved_scopes = std::mem::replace(&mut self.scopes, vec![top]);
        let saved_body = self.body.take();
        let saved_name = self.block_name.take();
        self.push_scope();
        for (t, ty) in type_params.iter().zip(tys) {
            self.declare(t, Sym::Type(ty.clone()));
        }
        for (n, v) in values {
            self.declare(&n, v);
        }
        let out = check(self);
        self.scopes = saved_scopes;
        self.body = saved_body;
        self.block_name = saved_name;
        out
    }
}

/// "a" or "an" before `word`.
pub(super) fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

/// What [`Checker::global_in_body`] found.
pub(crate) enum GlobalUse {
    /// The instance's index in the body's extern instances.
    Index(u32),
    /// An error is reported (here, or by the controls).
    Reported,
    /// Not in a parser, function or top-level action body (a control's
    /// declares every top-level instance as its own): a constant's
    /// initialiser or a declaration's argument.
    NotHere,
}

pub(super) fn el_span(el: &ast::KeysetElem) -> Span {
    match el {
        ast::KeysetElem::Expr(e) => e.span,
        ast::KeysetElem::Mask { span, .. } | ast::KeysetElem::Range { span, .. } => *span,
        ast::KeysetElem::Default(s) | ast::KeysetElem::DontCare(s) => *s,
    }
}

/// The directionless `int` parameters among a parser's or control's apply
/// parameters, or a function's: their positions, themselves, and the other
/// parameters; `None` when there are none.
pub(super) fn split_int_params(
    params: &[ast::Param],
) -> Option<(Vec<usize>, Vec<ast::Param>, Vec<ast::Param>)> {
    let is_int = |p: &ast::Param| {
        p.direction == ast::Direction::None && matches!(p.ty.kind, ast::TypeKind::Int)
    };
    let positions: Vec<usize> = (0..params.len()).filter(|i| is_int(&params[*i])).collect();
    if positions.is_empty() {
        return None;
    }
    let (ints, rest): (Vec<ast::Param>, Vec<ast::Param>) =
        params.iter().cloned().partition(|p| is_int(p));
    Some((positions, ints, rest))
}
