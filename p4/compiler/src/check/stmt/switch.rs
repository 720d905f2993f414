//! `switch` statements: on `t.apply().action_run` by action name, and on
//! a bit string, enum or error by constant labels (P4_16 spec §12.7).

use crate::check::{BodyKind, Checker, Sym, codes, fold};
use crate::front::ast;
use crate::ir::{self, ExprKind, Stmt, Ty};

impl Checker {
    pub(super) fn switch(
        &mut self,
        expr: &ast::Expr,
        cases: &[ast::SwitchCase],
        s: &ast::Stmt,
        out: &mut ir::Block,
    ) {
        // p4c's front end and BMv2: "switch statements not supported in
        // actions" (issue3299); an action body is one straight-line
        // primitive list in BMv2's JSON, where `if` is predicated but a
        // `switch` has no form.
        if self.body.as_ref().map(|b| b.kind) == Some(BodyKind::Action) {
            self.error_label(
                codes::NOT_ALLOWED_HERE,
                expr.span,
                "`switch` statements are not allowed in actions (p4c and BMv2 refuse them); use `if`, or switch in the apply block",
                "switch inside an action",
            );
        }
        // p4c's grammar has no `switch` among parser statements (a parser
        // state chooses with `transition select`); its BMv2 back end has
        // no form for one there either. Ours took it as in a control.
        if self.body.as_ref().map(|b| b.kind) == Some(BodyKind::Parser) {
            self.error_label(
                codes::NOT_ALLOWED_HERE,
                expr.span,
                "`switch` statements are not allowed in parsers (p4c's grammar has none there); use `transition select`, or `if`",
                "switch inside a parser state",
            );
        }
        // P4_16 §12.7.3: `default` comes last (p4c rejects it elsewhere).
        for c in cases.iter().take(cases.len().saturating_sub(1)) {
            if let ast::SwitchLabel::Default(sp) = &c.label {
                self.error_label(
                    codes::BAD_SELECT,
                    *sp,
                    "`default` must be the last switch label",
                    "not last",
                );
            }
        }
        // `switch (t.apply().action_run)`.
        if let ast::ExprKind::Member { base, member } = &expr.kind
            && member.name == "action_run"
            && let ast::ExprKind::Call { callee, args, .. } = &base.kind
            && let ast::ExprKind::Member {
                base: tb,
                member: m,
            } = &callee.kind
            && let (ast::ExprKind::Name(p), "apply", true) =
                (&tb.kind, m.name.as_str(), args.is_empty())
            && let Some(Sym::Table(t)) = self.lookup(p).cloned()
        {
            if self.body.as_ref().map(|b| b.kind) != Some(BodyKind::Apply) {
                self.error(
                    codes::NOT_ALLOWED_HERE,
                    expr.span,
                    "tables may only be applied in a control's apply block",
                );
                return;
            }
            let allowed = self.prog.tables[t].actions.clone();
            let mut ir_cases = Vec::new();
            for c in cases {
                let body = c.body.as_ref().map(|b| self.block(b));
                match &c.label {
                    ast::SwitchLabel::Default(_) => ir_cases.push(ir::ActionCase {
                        actions: vec![],
                        is_default: true,
                        body,
                    }),
                    ast::SwitchLabel::Expr(e) => {
                        let ast::ExprKind::Name(an) = &e.kind else {
                            self.error(codes::BAD_ACTION_REF, e.span, "expected an action name");
                            continue;
                        };
                        match self.lookup(an).cloned() {
                            Some(Sym::Action(a))
                                if ir_cases
                                    .iter()
                                    .any(|c: &ir::ActionCase| c.actions.contains(&a)) =>
                            {
                                self.duplicate_label(e.span)
                            }
                            Some(Sym::Action(a)) if allowed.contains(&a) => {
                                ir_cases.push(ir::ActionCase {
                                    actions: vec![a],
                                    is_default: false,
                                    body,
                                })
                            }
                            _ => self.error_label(
                                codes::BAD_ACTION_REF,
                                e.span,
                                format!(
                                    "`{}` is not an action of table `{}`",
                                    an.ident.name, self.prog.tables[t].name
                                ),
                                "not in the table's actions",
                            ),
                        }
                    }
                }
            }
            out.push(Stmt::SwitchAction(t, ir_cases));
            return;
        }
        let Some(v) = self.expr(expr, None) else {
            return;
        };
        if !matches!(
            v.ty,
            Ty::Bit(_) | Ty::Int(_) | Ty::Enum(_) | Ty::SerEnum(_) | Ty::Error
        ) {
            self.error(
                codes::TYPE_MISMATCH,
                expr.span,
                format!("cannot switch on {}", self.ty_name(&v.ty)),
            );
            return;
        }
        let ty = v.ty.clone();
        let mut ir_cases = Vec::new();
        for c in cases {
            let body = c.body.as_ref().map(|b| self.block(b));
            match &c.label {
                ast::SwitchLabel::Default(_) => ir_cases.push(ir::SwitchCase {
                    labels: vec![],
                    is_default: true,
                    body,
                }),
                ast::SwitchLabel::Expr(e) => {
                    // An integer is not a value of a serializable enum
                    // without a cast (P4_16 §8.3; p4c's issue3623-3).
                    if let (Ty::SerEnum(_), ast::ExprKind::Int(_)) = (&ty, &e.kind) {
                        self.error_label(
                            codes::TYPE_MISMATCH,
                            e.span,
                            format!(
                                "a switch on {} takes members as labels: an integer needs a cast",
                                self.ty_name(&ty)
                            ),
                            "an integer",
                        );
                        continue;
                    }
                    let Some(l) = self.expr(e, Some(&ty)) else {
                        continue;
                    };
                    if fold::const_int(&l).is_none() && !matches!(l.kind, ExprKind::EnumMember(..))
                    {
                        self.error(
                            codes::NOT_CONSTANT,
                            e.span,
                            "switch labels must be constants",
                        );
                        continue;
                    }
                    let same = |a: &ir::Expr, b: &ir::Expr| match (&a.kind, &b.kind) {
                        (ExprKind::EnumMember(x, i), ExprKind::EnumMember(y, j)) => {
                            x == y && i == j
                        }
                        _ => {
                            fold::const_int(a).is_some() && fold::const_int(a) == fold::const_int(b)
                        }
                    };
                    if ir_cases
                        .iter()
                        .any(|c: &ir::SwitchCase| c.labels.iter().any(|x| same(x, &l)))
                    {
                        self.duplicate_label(e.span);
                        continue;
                    }
                    ir_cases.push(ir::SwitchCase {
                        labels: vec![l],
                        is_default: false,
                        body,
                    });
                }
            }
        }
        let _ = s;
        out.push(Stmt::Switch(v, ir_cases));
    }

    fn duplicate_label(&mut self, span: crate::diag::Span) {
        self.error_label(
            codes::DUPLICATE,
            span,
            "this switch label appears twice",
            "duplicate label",
        );
    }
}
