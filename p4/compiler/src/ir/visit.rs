//! The operands of an expression: the one place in the compiler that knows
//! which `ExprKind`s hold sub-expressions, so that walks over expressions
//! (does it call anything, may it be evaluated twice, which headers may it
//! write) differ only in what they do at each node, in the checker and the
//! back ends alike.
//!
//! A call's arguments are not operands here: what an argument means (read,
//! written, a table's key) depends on the callee, so each walk handles
//! `ExprKind::Call` itself.

use super::*;

/// Calls `f` on each direct operand of `e`, left to right; nothing for
/// leaves (literals, variables, `lookahead`, `t.apply().hit`, defaults)
/// and for calls.
pub fn each_operand<'a>(e: &'a Expr, mut f: impl FnMut(&'a Expr)) {
    match &e.kind {
        ExprKind::Member(a, _)
        | ExprKind::StackNext(a)
        | ExprKind::StackLast(a)
        | ExprKind::StackLastIndex(a)
        | ExprKind::StackNextIndex(a)
        | ExprKind::IsValid(a)
        | ExprKind::Unary(_, a)
        | ExprKind::Slice(a, _, _)
        | ExprKind::Cast(a) => f(a),
        ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) => {
            f(a);
            f(b);
        }
        ExprKind::Mux(a, b, c) => {
            f(a);
            f(b);
            f(c);
        }
        ExprKind::List(items) => items.iter().for_each(f),
        ExprKind::Call(_)
        | ExprKind::Int(_)
        | ExprKind::WideInt(_)
        | ExprKind::Bool(_)
        | ExprKind::ErrorCode(_)
        | ExprKind::EnumMember(..)
        | ExprKind::Var(_)
        | ExprKind::TableHit(..)
        | ExprKind::Lookahead
        | ExprKind::PacketLength
        | ExprKind::Default => {}
    }
}

/// Whether `e` or any operand of it, at any depth, satisfies `p`.
pub fn any_node(e: &Expr, p: &impl Fn(&Expr) -> bool) -> bool {
    if p(e) {
        return true;
    }
    let mut found = false;
    each_operand(e, |o| found = found || any_node(o, p));
    found
}

/// Whether evaluating `e` calls anything (a function, action, method or
/// table apply) or reads the packet (`lookahead`): such an expression must
/// be evaluated once and in its place in the order of evaluation.
pub fn has_call(e: &Expr) -> bool {
    any_node(e, &|e| {
        matches!(
            e.kind,
            ExprKind::Call(_) | ExprKind::TableHit(..) | ExprKind::Lookahead
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf(v: u128) -> Expr {
        Expr {
            kind: ExprKind::Int(v),
            ty: Ty::Bit(8),
            span: Span::default(),
        }
    }

    fn node(kind: ExprKind) -> Expr {
        Expr {
            kind,
            ty: Ty::Bit(8),
            span: Span::default(),
        }
    }

    #[test]
    fn operands_come_left_to_right_and_leaves_have_none() {
        let e = node(ExprKind::Mux(
            Box::new(leaf(1)),
            Box::new(leaf(2)),
            Box::new(leaf(3)),
        ));
        let mut seen = Vec::new();
        each_operand(&e, |o| {
            if let ExprKind::Int(v) = o.kind {
                seen.push(v)
            }
        });
        assert_eq!(seen, [1, 2, 3]);
        let mut n = 0;
        each_operand(&leaf(7), |_| n += 1);
        assert_eq!(n, 0);
    }

    #[test]
    fn any_node_finds_a_node_deep_inside() {
        let deep = node(ExprKind::Binary(
            BinOp::Add,
            Box::new(leaf(1)),
            Box::new(node(ExprKind::Cast(Box::new(node(ExprKind::Lookahead))))),
        ));
        assert!(any_node(&deep, &|e| matches!(e.kind, ExprKind::Lookahead)));
        assert!(!any_node(&deep, &|e| matches!(e.kind, ExprKind::Bool(_))));
    }
}
