//! Extern instances passed to controls as directionless apply parameters
//! or constructor parameters (P4_16 §6.8: an extern object is passed as a
//! directionless parameter, by reference; §7.2.12 extern objects; p4c's
//! issue1958 passes a `register<bit<8>>` to a sub-control's apply).
//!
//! In: a control whose apply parameters include directionless ones of an
//! extern object type (`register<T>`, `counter`, `meter`, a user extern
//! object type). Out: the parameter becomes one of the control's
//! [`ir::ExternInst`]s (its kind read from the parameter's type, sizes 0),
//! left out of [`ir::Control::params`], so the body's calls on it are the
//! ordinary extern calls; each `inst.apply(.., r)` binds it to the caller's
//! instance `r` ([`Checker::extern_bindings`]; a constructor parameter is
//! bound by `C(r) inst;`, [`Checker::extern_ctor_bindings`]), and the
//! layout points the
//! callee instance's slot at the caller's object
//! (`program_info::build_program_info`): one object, reached from both, no
//! P4Info object of its own.
//!
//! Not taken (`P4E1060`): parameters of a table's externs (`direct_counter`,
//! `direct_meter`, `action_profile`, `action_selector`), extern parameters
//! of parsers (a parser's externs are one object per declaration), and one
//! instance applied with two different instances for a parameter (its
//! objects are fixed per instance, not per apply).

use super::{Checker, Sym, codes};
use crate::diag::Span;
use crate::front::ast;
use crate::ir::{self, Handle};

/// An apply parameter of an extern type, as the checker keeps it.
#[derive(Clone, Debug)]
pub(crate) struct ExternParam {
    /// Position among the apply parameters the IR control keeps the
    /// arguments of, plus the extern ones (the source's positions once any
    /// directionless `int` parameters are taken out).
    pub(crate) position: usize,
    /// Index among the control's extern instances.
    pub(crate) inst: u32,
    /// A constructor parameter (bound where the control is instantiated)
    /// rather than an apply parameter (bound at its apply).
    pub(crate) ctor: bool,
    /// Source name.
    pub(crate) name: String,
}

impl Checker {
    /// Whether `p` is a directionless parameter of an extern object type
    /// (a direction is refused by [`Self::extern_params`]).
    pub(crate) fn names_extern_object(&self, p: &ast::Param) -> bool {
        let ast::TypeKind::Named { name, .. } = &p.ty.kind else {
            return false;
        };
        match self.lookup(name) {
            // `packet_in`/`packet_out` are the block's packet, not objects
            // of its own.
            Some(Sym::ExternDecl(e)) if e == "packet_in" || e == "packet_out" => false,
            Some(Sym::ExternDecl(e)) => {
                crate::v1model::object(e).is_some() || self.is_user_extern_type(e)
            }
            _ => false,
        }
    }

    /// Splits the apply parameters of a control: the ones of extern object
    /// types come back with their positions, the others to be checked as
    /// usual. A direction on an extern parameter is reported here (P4_16
    /// §6.8; the body-less signatures get it from
    /// `directionless_object_params`).
    pub(crate) fn extern_params(
        &mut self,
        params: &[ast::Param],
    ) -> (Vec<ast::Param>, Vec<(usize, ast::Param)>) {
        let mut rest = Vec::new();
        let mut externs = Vec::new();
        for (i, p) in params.iter().enumerate() {
            if !self.names_extern_object(p) {
                rest.push(p.clone());
                continue;
            }
            if !matches!(p.direction, ast::Direction::None) {
                self.error_label(
                    codes::TYPE_MISMATCH,
                    p.span,
                    format!(
                        "parameter `{}` of an extern type cannot have a direction: an extern \
                         instance is passed as a directionless parameter",
                        p.name.name
                    ),
                    "remove the direction",
                );
                continue;
            }
            if let Some(d) = &p.default {
                self.error_label(
                    codes::NOT_ALLOWED_HERE,
                    d.span,
                    format!(
                        "extern parameter `{}` takes no default value: an instance is passed",
                        p.name.name
                    ),
                    "default value",
                );
                continue;
            }
            externs.push((i, p.clone()));
        }
        (rest, externs)
    }

    /// Adds the extern parameters `params` of control `h` to its extern
    /// instances and declares them.
    pub(crate) fn declare_extern_params(
        &mut self,
        h: Handle<ir::Control>,
        params: &[(usize, ast::Param)],
        ctor: bool,
    ) {
        let mut slots = self
            .extern_param_slots
            .remove(&h.index())
            .unwrap_or_default();
        for (position, p) in params {
            let Some(kind) = self.extern_param_kind(p) else {
                continue;
            };
            let ctl = &mut self.prog.controls[h];
            let inst = ctl.externs.len() as u32;
            ctl.externs.push(ir::ExternInst {
                name: p.name.name.clone(),
                kind,
                span: p.span,
            });
            self.declare(&p.name, Sym::Extern(inst));
            slots.push(ExternParam {
                position: *position,
                inst,
                ctor,
                name: p.name.name.clone(),
            });
        }
        if !slots.is_empty() {
            self.extern_param_slots.insert(h.index(), slots);
        }
    }

    /// The extern kind parameter `p`'s type names: what a call on it needs
    /// (a register's cell type, a user extern's declaration); sizes and
    /// units are the instance passed's, so they are left 0 here.
    pub(crate) fn extern_param_kind(&mut self, p: &ast::Param) -> Option<ir::ExternKind> {
        let ast::TypeKind::Named { name, args } = &p.ty.kind else {
            return None;
        };
        let ext = name.ident.name.as_str();
        let packets = p4_target::info::CounterUnit::Packets;
        match ext {
            "register" => {
                let Some(t) = args.first() else {
                    self.error(
                        codes::ARG_COUNT,
                        p.ty.span,
                        "register needs a cell type: `register<bit<32>>`",
                    );
                    return None;
                };
                let cell = self.ty(t)?;
                let width = super::blocks::register_cell_width(&cell, &self.prog).unwrap_or(0);
                Some(ir::ExternKind::Register {
                    cell,
                    width,
                    size: 0,
                })
            }
            "counter" => Some(ir::ExternKind::Counter {
                size: 0,
                unit: packets,
            }),
            "meter" => Some(ir::ExternKind::Meter {
                size: 0,
                unit: packets,
            }),
            _ if crate::v1model::object(ext).is_some() => {
                self.unsupported(
                    p.span,
                    &format!(
                        "`{ext}` parameters (`{}`): a table's extern is passed only as its \
                         table's property",
                        p.name.name
                    ),
                );
                None
            }
            _ => {
                use super::user_externs::UserType;
                match self.user_extern_type(ext, args, &[], p.ty.span) {
                    UserType::Found(decl) => {
                        self.prog.user_externs[decl as usize].used = true;
                        Some(ir::ExternKind::User {
                            decl,
                            ctor: 0,
                            args: Vec::new(),
                        })
                    }
                    UserType::Reported => None,
                    UserType::NotUser => {
                        let what = format!("the extern `{ext}`");
                        self.refused_user_extern(ext, &what, p.ty.span);
                        None
                    }
                }
            }
        }
    }

    /// How a diagnostic names an extern kind as a parameter type.
    pub(crate) fn extern_kind_name(&self, kind: &ir::ExternKind) -> String {
        match kind {
            ir::ExternKind::Register { cell, .. } => format!("register<{}>", self.ty_name(cell)),
            ir::ExternKind::User { decl, .. } => {
                let u = &self.prog.user_externs[*decl as usize];
                if u.type_args.is_empty() {
                    u.name.clone()
                } else {
                    let tys: Vec<String> = u.type_args.iter().map(|t| self.ty_name(t)).collect();
                    format!("{}<{}>", u.name, tys.join(", "))
                }
            }
            k => k.type_name().to_string(),
        }
    }

    /// Whether an instance of `got` may be passed for a parameter of kind
    /// `want`: the same extern type, with the same cell type for a register.
    pub(crate) fn extern_kind_fits(want: &ir::ExternKind, got: &ir::ExternKind) -> bool {
        use ir::ExternKind as K;
        match (want, got) {
            (K::Register { cell: a, .. }, K::Register { cell: b, .. }) => a == b,
            (K::Counter { .. }, K::Counter { .. }) | (K::Meter { .. }, K::Meter { .. }) => true,
            (K::User { decl: a, .. }, K::User { decl: b, .. }) => a == b,
            _ => false,
        }
    }

    /// The arguments of `apply` on sub-control instance `i` of control
    /// `ctl` (an instance of `sub`) once those for its extern parameters
    /// are taken out: each must name an extern instance of `ctl` of the
    /// parameter's type, and binds the parameter to it for this instance.
    pub(crate) fn apply_extern_args<'a>(
        &mut self,
        ctl: Handle<ir::Control>,
        i: u32,
        sub: Handle<ir::Control>,
        args: &[&'a ast::Expr],
        span: Span,
    ) -> Option<Vec<&'a ast::Expr>> {
        let slots: Vec<ExternParam> = self
            .extern_param_slots
            .get(&sub.index())
            .map(|v| v.iter().filter(|s| !s.ctor).cloned().collect())
            .unwrap_or_default();
        if slots.is_empty() {
            return Some(args.to_vec());
        }
        let callee = self.prog.controls[sub].name.clone();
        let total = self.prog.controls[sub]
            .params
            .iter()
            .filter(|p| p.default.is_none())
            .count()
            + slots.len();
        if slots.iter().any(|s| s.position >= args.len()) {
            self.error_label(
                codes::ARG_COUNT,
                span,
                format!(
                    "apply takes {total} argument{}, {} given",
                    if total == 1 { "" } else { "s" },
                    args.len()
                ),
                "wrong number of arguments",
            );
            self.extern_bindings.entry((ctl.index(), i)).or_default();
            return None;
        }
        if self.instance_aliases.contains_key(&(ctl.index(), i)) {
            self.unsupported(
                span,
                &format!(
                    "extern arguments to a control passed as a constructor argument (`{callee}`)"
                ),
            );
            return None;
        }
        let mut bound = Vec::new();
        let mut ok = true;
        for s in &slots {
            let want = self.prog.controls[sub].externs[s.inst as usize]
                .kind
                .clone();
            let a = args[s.position];
            let passed = match &a.kind {
                ast::ExprKind::Name(n) => match self.lookup(n) {
                    Some(Sym::Extern(e)) => Some(*e),
                    _ => None,
                },
                _ => None,
            };
            let what = self.extern_kind_name(&want);
            let Some(e) = passed else {
                let subject = match &a.kind {
                    ast::ExprKind::Name(n) => format!("`{}`", n.ident.name),
                    _ => "this argument".to_string(),
                };
                self.error_label(
                    codes::TYPE_MISMATCH,
                    a.span,
                    format!(
                        "{subject} is not an extern instance: parameter `{}` of `{callee}` takes \
                         a {what} instance",
                        s.name
                    ),
                    "expected an instance declared in this control or at the top level",
                );
                ok = false;
                continue;
            };
            if !self.extern_arg_fits(
                ctl,
                e,
                &want,
                a.span,
                ("parameter", s.name.as_str()),
                &callee,
            ) {
                ok = false;
                continue;
            }
            bound.push(e);
        }
        if !ok {
            // Reported: an empty binding keeps the instance from being
            // reported again as never applied.
            self.extern_bindings.entry((ctl.index(), i)).or_default();
            return None;
        }
        match self.extern_bindings.get(&(ctl.index(), i)) {
            Some(before) if !before.is_empty() && *before != bound => {
                let inst = self.prog.controls[ctl].instances[i as usize].0.clone();
                self.unsupported(
                    span,
                    &format!(
                        "applying `{inst}` with other extern instances than its first apply \
                         (an instance's extern parameters are bound once)"
                    ),
                );
                return None;
            }
            _ => {
                self.extern_bindings.insert((ctl.index(), i), bound);
            }
        }
        Some(
            args.iter()
                .enumerate()
                .filter(|(k, _)| !slots.iter().any(|s| s.position == *k))
                .map(|(_, a)| *a)
                .collect(),
        )
    }

    /// The instance passed as argument `a` to extern constructor parameter
    /// `p` of control `callee`: an extern instance of the control being
    /// checked, of the parameter's type; its index there.
    pub(crate) fn extern_ctor_arg(
        &mut self,
        callee: &str,
        p: &ast::Param,
        a: &ast::Expr,
    ) -> Option<u32> {
        let want = self.extern_param_kind(p)?;
        let what = self.extern_kind_name(&want);
        let here = self
            .body
            .as_ref()
            .filter(|b| b.kind == super::BodyKind::Apply)
            .and_then(|b| b.control);
        let passed = match (&a.kind, here) {
            (ast::ExprKind::Name(n), Some(_)) => match self.lookup(n) {
                Some(Sym::Extern(e)) => Some(*e),
                _ => None,
            },
            _ => None,
        };
        let (Some(e), Some(ctl)) = (passed, here) else {
            self.error_label(
                codes::TYPE_MISMATCH,
                a.span,
                format!(
                    "this argument is not an extern instance of the enclosing control: \
                     constructor parameter `{}` of `{callee}` takes a {what} instance",
                    p.name.name
                ),
                "expected an instance declared in this control or at the top level",
            );
            return None;
        };
        let role = ("constructor parameter", p.name.name.as_str());
        self.extern_arg_fits(ctl, e, &want, a.span, role, callee)
            .then_some(e)
    }

    /// Whether instance `e` of control `ctl`, passed to `param` (its role
    /// and name) of `callee`, is of the extern type `want`; reported if not.
    fn extern_arg_fits(
        &mut self,
        ctl: Handle<ir::Control>,
        e: u32,
        want: &ir::ExternKind,
        span: Span,
        (role, param): (&str, &str),
        callee: &str,
    ) -> bool {
        let got = self.prog.controls[ctl].externs[e as usize].kind.clone();
        if Self::extern_kind_fits(want, &got) {
            return true;
        }
        let have = self.extern_kind_name(&got);
        let what = self.extern_kind_name(want);
        self.error_label(
            codes::TYPE_MISMATCH,
            span,
            format!(
                "cannot pass {} {have} to {role} `{param}` of `{callee}`, a {what}",
                super::blocks::article(&have),
            ),
            "wrong extern type",
        );
        false
    }

    /// Every sub-control instance of `h` that has extern parameters was
    /// applied, so each is bound to an instance: one never applied would
    /// have code reaching no object.
    pub(crate) fn check_extern_params_bound(&mut self, h: Handle<ir::Control>) {
        let instances = self.prog.controls[h].instances.clone();
        for (i, (name, sub)) in instances.iter().enumerate() {
            let Some(slots) = self
                .extern_param_slots
                .get(&sub.index())
                .map(|v| v.iter().filter(|s| !s.ctor).cloned().collect::<Vec<_>>())
                .filter(|v| !v.is_empty())
            else {
                continue;
            };
            if self.extern_bindings.contains_key(&(h.index(), i as u32))
                || self.instance_aliases.contains_key(&(h.index(), i as u32))
            {
                continue;
            }
            let first = slots[0].name.clone();
            let span = self
                .instance_spans
                .get(&(h.index(), i as u32))
                .copied()
                .unwrap_or_else(|| self.prog.controls.span(h));
            self.unsupported(
                span,
                &format!(
                    "an instance of a control with extern parameters that is never applied \
                     (`{name}`, parameter `{first}`): its parameters are bound where it is \
                     applied"
                ),
            );
        }
    }
}
