//! Actions: declarations, and the action arguments a table or an entry
//! binds (constant, not aliasing an argument of the call).

use super::{explicit_id, name_spec};
use crate::check::{Body, BodyKind, Checker, codes, fold};
use crate::diag::{Diagnostic, Span};
use crate::front::ast;
use crate::ir::{self, Handle, Ty};

impl Checker {
    // --------------------------------------------------------------- action
    /// Refuses action parameter `p` of a `list<..>` type. A directionless
    /// one is action data, which the control plane writes, and P4Info has
    /// no list type to describe it; a directional one would need an action
    /// per list length, as a function has (`Checker::instantiate_generic_fn`),
    /// but an action is one P4Info object.
    fn action_list_param(&mut self, p: &ast::Param) {
        if p.direction == ast::Direction::None {
            self.error_label(
                codes::TYPE_MISMATCH,
                p.ty.span,
                format!(
                    "action data parameter `{}` cannot be a list: the control plane sets it, \
                     and P4Info has no list type",
                    p.name.name
                ),
                "a list type",
            );
        } else {
            self.unsupported(
                p.ty.span,
                &format!(
                    "`list<..>` parameters of actions (`{}`); a function takes one",
                    p.name.name
                ),
            );
        }
    }

    /// Checks an action; `control` is the enclosing control.
    pub(crate) fn action_decl(
        &mut self,
        a: &ast::ActionDecl,
        control: Option<Handle<ir::Control>>,
    ) -> Option<Handle<ir::Action>> {
        self.check_param_defaults(&a.params);
        self.push_scope();
        let mut vars = Vec::new();
        let mut n_directional = 0;
        let mut seen_data = false;
        for p in &a.params {
            if self.names_extern_object(p) {
                // p4c: "Action parameters cannot have extern types".
                self.error_label(
                    codes::TYPE_MISMATCH,
                    p.ty.span,
                    format!(
                        "action parameter `{}` cannot have an extern type: a control's or \
                         parser's directionless parameter takes an instance",
                        p.name.name
                    ),
                    "an extern type",
                );
                continue;
            }
            if matches!(p.ty.kind, ast::TypeKind::List(_)) {
                self.action_list_param(p);
                continue;
            }
            let Some(ty) = self.storable_ty(&p.ty, "an action parameter") else {
                continue;
            };
            // A default value is checked here, used or not (p4c).
            if let Some(d) = &p.default {
                self.default_value(d, &ty);
            }
            let directional = p.direction != ast::Direction::None;
            if directional {
                if seen_data {
                    self.error(
                        codes::TYPE_MISMATCH,
                        p.span,
                        "directional action parameters must come before action data parameters",
                    );
                }
                n_directional += 1;
            } else {
                seen_data = true;
                if !matches!(ty, Ty::Bit(_) | Ty::Int(_) | Ty::Bool | Ty::SerEnum(_)) {
                    self.error(
                        codes::TYPE_MISMATCH,
                        p.ty.span,
                        "action data parameters must be bit strings or bool",
                    );
                }
            }
            self.declare_param_var(&mut vars, p, ty);
        }
        let n_params = vars.len() as u32;
        let saved = self.body.replace(Body {
            kind: BodyKind::Action,
            vars,
            ret: Ty::Void,
            control,
            loops: 0,
            externs: Vec::new(),
        });
        let outer_implicit = std::mem::replace(&mut self.uses_implicit_std_meta, false);
        let outer_reads = std::mem::take(&mut self.facts.pending_meter_reads);
        let outer_counts = std::mem::take(&mut self.facts.pending_counter_counts);
        let body = self.block(&a.body);
        let implicit = std::mem::replace(&mut self.uses_implicit_std_meta, outer_implicit);
        let meter_reads = std::mem::replace(&mut self.facts.pending_meter_reads, outer_reads);
        let counter_counts =
            std::mem::replace(&mut self.facts.pending_counter_counts, outer_counts);
        let b = std::mem::replace(&mut self.body, saved)?;
        self.pop_scope();
        let (externs, extern_names): (Vec<_>, Vec<_>) =
            b.externs.into_iter().map(|e| (e.inst, e.name)).unzip();
        let spec = name_spec(&a.annotations, &a.name.name);
        let local_name = (self.block_name.is_some() && !spec.absolute).then(|| spec.name.clone());
        let p4_name = match (&self.block_name, spec.absolute) {
            (Some(bn), false) => format!("{bn}.{}", spec.name),
            _ => spec.name,
        };
        let explicit = explicit_id(&a.annotations);
        let h = self.prog.actions.append(
            ir::Action {
                name: a.name.name.clone(),
                p4_name,
                local_name,
                control,
                vars: b.vars,
                n_params,
                n_directional,
                body,
                externs,
                span: a.span,
            },
            a.span,
        );
        for (i, n) in extern_names.into_iter().enumerate() {
            self.facts
                .action_extern_names
                .insert((h.index(), i as u32), n);
        }
        if let Some(id) = explicit {
            self.facts.action_explicit_ids.insert(h.index(), id);
        }
        if implicit {
            self.facts.implicit_std_meta_actions.insert(h.index());
        }
        if !meter_reads.is_empty() {
            self.facts.meter_reads.insert(h.index(), meter_reads);
        }
        if !counter_counts.is_empty() {
            self.facts.counter_counts.insert(h.index(), counter_counts);
        }
        let params = self.param_specs(&a.params);
        self.action_params.insert(h.index(), params);
        Some(h)
    }

    /// A default action or an entry's action (`what`) written with its
    /// directional arguments (`a(hdr.x, 5)`) repeats the ones the `actions`
    /// list binds (`actions = { a(hdr.x); }`): it is the same bound action,
    /// and p4c refuses another argument ("argument does not match
    /// declaration in actions list").
    pub(super) fn check_bound_args(
        &mut self,
        a: Handle<ir::Action>,
        args: &[ast::Argument],
        listed: &[ir::Expr],
        what: &str,
    ) {
        let act = &self.prog.actions[a];
        let n = act.n_directional as usize;
        if n == 0 || args.len() != act.n_params as usize || listed.len() != n {
            return;
        }
        if args.iter().any(|x| x.name.is_some()) {
            return;
        }
        let tys: Vec<Ty> = act.vars[..n].iter().map(|v| v.ty.clone()).collect();
        for ((arg, ty), want) in args.iter().zip(tys).zip(listed) {
            let Some(got) = self.expr(&arg.value, Some(&ty)) else {
                return;
            };
            if !same_place(&got, want) {
                self.diags.push(
                    Diagnostic::error(
                        codes::BAD_DEFAULT_ACTION,
                        format!(
                            "the {what}'s argument differs from the one the `actions` list binds"
                        ),
                    )
                    .with_primary(arg.value.span, "this argument")
                    .with_secondary(want.span, "bound here"),
                );
            }
        }
    }

    /// Constant arguments for an action's data parameters.
    pub(super) fn const_action_args(
        &mut self,
        a: Handle<ir::Action>,
        args: &[ast::Argument],
        span: Span,
    ) -> Option<Vec<u128>> {
        let act = self.prog.actions[a].clone();
        let data = act.data_params().to_vec();
        let bound: Vec<ast::Expr> = if args.iter().any(|x| x.name.is_some()) {
            // Named arguments name the action data parameters.
            let all = self
                .action_params
                .get(&a.index())
                .cloned()
                .unwrap_or_default();
            let params = all
                .get(act.n_directional as usize..)
                .unwrap_or(&[])
                .to_vec();
            self.bind_args(&format!("action `{}`", act.name), &params, args, span)?
        } else {
            args.iter().map(|x| x.value.clone()).collect()
        };
        let args: Vec<&ast::Expr> = bound.iter().collect();
        let args = args.as_slice();
        // `a(bound.., data..)` in default_action/entries: the directional
        // arguments repeat the ones bound in the actions list.
        let args = if args.len() == act.n_params as usize && act.n_directional > 0 {
            &args[act.n_directional as usize..]
        } else {
            args
        };
        if data.len() != args.len() {
            self.error_label(
                codes::ARG_COUNT,
                span,
                format!(
                    "action `{}` takes {} argument{}, {} given",
                    act.name,
                    data.len(),
                    if data.len() == 1 { "" } else { "s" },
                    args.len()
                ),
                "wrong number of arguments",
            );
            return None;
        }
        let mut out = Vec::new();
        for (p, e) in data.iter().zip(args) {
            let x = self.expr(e, Some(&p.ty))?;
            match fold::const_int(&x) {
                Some(v) => out.push(v),
                None => {
                    self.error(
                        codes::NOT_CONSTANT,
                        e.span,
                        "action arguments here must be constants",
                    );
                    return None;
                }
            }
        }
        Some(out)
    }
}

/// Whether two checked arguments name the same place or value: variables,
/// fields, constant indices and slices, constants. Forms it does not know
/// count as the same, so a doubt never refuses a program.
fn same_place(a: &ir::Expr, b: &ir::Expr) -> bool {
    use ir::ExprKind as K;
    match (&a.kind, &b.kind) {
        (K::Var(x), K::Var(y)) => x == y,
        (K::Member(x, i), K::Member(y, j)) => i == j && same_place(x, y),
        (K::Index(x, i), K::Index(y, j)) => same_place(x, y) && same_place(i, j),
        (K::Slice(x, h1, l1), K::Slice(y, h2, l2)) => h1 == h2 && l1 == l2 && same_place(x, y),
        (K::Int(x), K::Int(y)) => x == y,
        (K::Bool(x), K::Bool(y)) => x == y,
        // Struct-valued and list arguments (in field order) match member by
        // member, calls by what they call and their arguments (p4c's
        // issue3671-2: `a1({f0 = ext1(), f1 = ext2()})` bound, the fields
        // swapped in `default_action`).
        (K::List(xs), K::List(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| same_place(x, y))
        }
        (K::Call(x), K::Call(y)) => match (callee(x), callee(y)) {
            (Some((f, xs)), Some((g, ys))) => {
                f == g && xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| same_place(x, y))
            }
            _ => true,
        },
        // Two known forms of different kinds differ; anything else is a doubt.
        (x, y) => !(known(x) && known(y)),
    }
}

/// The forms [`same_place`] compares.
fn known(kind: &ir::ExprKind) -> bool {
    use ir::ExprKind as K;
    matches!(
        kind,
        K::Var(_)
            | K::Member(..)
            | K::Index(..)
            | K::Slice(..)
            | K::Int(_)
            | K::Bool(_)
            | K::List(_)
            | K::Call(_)
    )
}

/// What a call calls: a kind tag (function, user extern function, user
/// extern method) and its indices.
type CalleeId = (u8, u32, u32);

/// What a function or user extern call calls and its arguments, for
/// [`same_place`]; `None` for other calls.
fn callee(c: &ir::Call) -> Option<(CalleeId, &[ir::Expr])> {
    match c {
        ir::Call::Function(f, args) => Some(((0, f.index() as u32, 0), args)),
        ir::Call::Builtin(b) => match b.as_ref() {
            ir::Builtin::UserFunction { func, args } => Some(((1, *func, 0), args)),
            ir::Builtin::UserMethod { inst, method, args } => Some(((2, *inst, *method), args)),
            _ => None,
        },
        _ => None,
    }
}
