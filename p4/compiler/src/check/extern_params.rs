//! Extern instances passed to controls and parsers as directionless apply
//! parameters or constructor parameters (P4_16 §6.8: an extern object is
//! passed as a directionless parameter, by reference; §7.2.12 extern
//! objects; §15 parameterization; p4c's issue1958 passes a
//! `register<bit<8>>` to a sub-control's apply).
//!
//! In: a block whose parameters include directionless ones of an extern
//! object type (`register<T>`, `counter`, `meter`, a user extern object
//! type). Out: each such parameter becomes one of the block's
//! [`ir::ExternInst`]s (its kind read from the parameter's type, sizes 0),
//! left out of the IR block's parameters, so the body's calls on it are the
//! ordinary extern calls, and [`ExternParamState`] records what it is bound
//! to:
//!
//! - a control's apply parameter at each `inst.apply(.., r)`
//!   ([`ExternParamState::apply_bindings`]), a constructor parameter where
//!   the instance is declared, `C(r) inst;`
//!   ([`ExternParamState::ctor_bindings`]); both per control instance;
//! - a parser's apply parameter at `sub.apply(pkt, .., r)` in a state of
//!   the calling parser, a constructor parameter at `P(r) sub;`
//!   ([`ExternParamState::parser_bindings`]). A parser's extern objects
//!   are one per declaration, not per instance, so each parameter is bound
//!   once: a parser with extern constructor parameters is checked afresh
//!   for each instantiation, and one applied with two different instances
//!   for a parameter is refused. A constructor parameter of the parser in
//!   `V1Switch(..)` takes a top-level instance, which the parser then uses
//!   as it would by name.
//!
//! The layout points the parameter's slot at the caller's object
//! (`program_info::build_program_info`): one object, reached from both, no
//! P4Info object of its own.
//!
//! Not taken (`P4E1060`): parameters of a table's externs (`direct_counter`,
//! `direct_meter`, `action_profile`, `action_selector`), one control
//! instance or parser applied with two different instances for a
//! parameter (its objects are fixed per instance, or per parser, not per
//! apply), and a parser with extern apply parameters that is never applied.

use std::collections::HashMap;

use super::blocks::GlobalUse;
use super::{BodyKind, Checker, Sym, codes};
use crate::diag::Span;
use crate::front::ast;
use crate::ir::{self, Handle};

/// What the checker knows of extern parameters, in one place so that a
/// check whose changes are thrown away ([`Checker::discarding_changes`])
/// throws these away too.
#[derive(Clone, Debug, Default)]
pub(crate) struct ExternParamState {
    /// Extern parameters of each control, by handle index.
    pub(crate) controls: HashMap<usize, Vec<ExternParam>>,
    /// Extern parameters of each parser, by handle index.
    pub(crate) parsers: HashMap<usize, Vec<ExternParam>>,
    /// The instances bound to a control's apply parameters: (control
    /// handle index, sub-control instance index) → the index, among that
    /// control's extern instances, of the instance passed for each, in
    /// parameter order.
    pub(crate) apply_bindings: HashMap<(usize, u32), Vec<u32>>,
    /// The instances bound to a control's constructor parameters, as
    /// `apply_bindings` (set where the instance is declared).
    pub(crate) ctor_bindings: HashMap<(usize, u32), Vec<u32>>,
    /// Those of the control instantiation just checked, for the instance
    /// about to be declared.
    pub(crate) pending_ctor: Vec<u32>,
    /// Those `ctor_values` found for a control, taken by its caller.
    pub(crate) ctor_args: Vec<u32>,
    /// Where each declared sub-control instance is: (control handle index,
    /// instance index) → its instantiation.
    pub(crate) instance_spans: HashMap<(usize, u32), Span>,
    /// The instance bound to each parser extern parameter: (parser handle
    /// index, its extern index) → (the calling parser's handle index, the
    /// index of the instance passed among its externs).
    pub(crate) parser_bindings: HashMap<(usize, u32), (usize, u32)>,
    /// Bindings made by the parser body being checked, whose own handle is
    /// known only once it is checked.
    pub(crate) parser_pending: Vec<ParserBind>,
    /// The instances `ctor_values` found for the extern constructor
    /// parameters of the parser about to be checked, in parameter order.
    pub(crate) parser_ctor_args: Vec<ParserArg>,
    /// The top-level instances `ctor_values` found for the extern
    /// constructor parameters of a control in `V1Switch(..)`: (parameter,
    /// top-level instance name, argument); taken by its caller.
    pub(crate) ctor_global_args: Vec<(ast::Param, String, Span)>,
    /// Those of the control about to be checked, which declares each
    /// parameter as its copy of the top-level instance.
    pub(crate) pending_global_ctor: Vec<(ast::Param, String, Span)>,
}

/// An extern parameter of a parser bound by the parser body being checked.
#[derive(Clone, Debug)]
pub(crate) struct ParserBind {
    /// The parser applied or instantiated.
    pub(crate) callee: Handle<ir::Parser>,
    /// The parameter's index among its extern instances.
    pub(crate) inst: u32,
    /// The instance passed: its index among the caller's extern instances.
    pub(crate) passed: u32,
    /// The apply or instantiation.
    pub(crate) span: Span,
}

/// The instance passed to a parser's extern constructor parameter.
#[derive(Clone, Debug)]
pub(crate) enum ParserArg {
    /// One of the calling parser's extern instances (its index there).
    Local(u32),
    /// A top-level instance, passed where no parser calls (`V1Switch(..)`):
    /// its name and the argument's span.
    Global(String, Span),
}

/// A parameter of an extern type, as the checker keeps it.
#[derive(Clone, Debug)]
pub(crate) struct ExternParam {
    /// Position among the apply parameters the IR block keeps the
    /// arguments of, plus the extern ones (the source's positions once any
    /// directionless `int` parameters are taken out); among the
    /// constructor parameters for a constructor parameter.
    pub(crate) position: usize,
    /// Index among the block's extern instances.
    pub(crate) inst: u32,
    /// A constructor parameter (bound where the block is instantiated)
    /// rather than an apply parameter (bound at its apply).
    pub(crate) ctor: bool,
    /// Source name.
    pub(crate) name: String,
}

impl Checker {
    /// Whether `p` is a directionless parameter of an extern object type
    /// (a direction is refused by [`Self::split_extern_params`]).
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

    /// The constructor parameters of a control or parser whose types name
    /// extern objects, with their positions among all its constructor
    /// parameters.
    pub(crate) fn extern_ctor_params(
        &self,
        ctor_params: &[ast::Param],
    ) -> Vec<(usize, ast::Param)> {
        ctor_params
            .iter()
            .enumerate()
            .filter(|(_, p)| self.names_extern_object(p))
            .map(|(i, p)| (i, p.clone()))
            .collect()
    }

    /// Splits the parameters of a control or parser: the ones of extern object
    /// types come back with their positions, the others to be checked as
    /// usual. A direction on an extern parameter is reported here (P4_16
    /// §6.8; the body-less signatures get it from
    /// `directionless_object_params`).
    pub(crate) fn split_extern_params(
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

    /// Adds the extern parameters `params` of the block being checked to
    /// its extern instances (control `owner`'s, or with `None` the parser
    /// body's) and declares them; their slots.
    pub(crate) fn declare_extern_params(
        &mut self,
        owner: Option<Handle<ir::Control>>,
        params: &[(usize, ast::Param)],
        ctor: bool,
    ) -> Vec<ExternParam> {
        let mut slots = Vec::new();
        for (position, p) in params {
            let Some(kind) = self.extern_param_kind(p) else {
                continue;
            };
            // The type arguments the program's v1model version declares;
            // the index type `I` is kept under the parameter's span, the
            // span of the instance it becomes (`Checker::extern_index`).
            // Refused ones are reported there; the parameter still takes
            // its argument, so the call's count stays right.
            if let ast::TypeKind::Named { name, args } = &p.ty.kind {
                self.v1model_type_args(&name.ident.name, args, p.span);
            }
            let inst = ir::ExternInst {
                name: p.name.name.clone(),
                kind,
                span: p.span,
            };
            let name = super::blocks::name_spec(&[], &p.name.name);
            let Some(inst) = self.push_extern(owner, &p.name, inst, name) else {
                continue;
            };
            slots.push(ExternParam {
                position: *position,
                inst,
                ctor,
                name: p.name.name.clone(),
            });
        }
        slots
    }

    /// Declares the extern parameters of control `h` (`declare_extern_params`)
    /// and keeps their slots.
    pub(crate) fn declare_control_extern_params(
        &mut self,
        h: Handle<ir::Control>,
        params: &[(usize, ast::Param)],
        ctor: bool,
    ) {
        let slots = self.declare_extern_params(Some(h), params, ctor);
        if !slots.is_empty() {
            self.extern_params
                .controls
                .entry(h.index())
                .or_default()
                .extend(slots);
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
                match self.user_extern_type(ext, args, &[], 0, p.ty.span) {
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

    /// Whether `apply`'s `given` arguments reach every extern parameter
    /// in `slots` of a block with `required` other parameters; reports
    /// the count when they do not.
    fn extern_args_present(
        &mut self,
        required: usize,
        slots: &[ExternParam],
        given: usize,
        span: Span,
    ) -> bool {
        if slots.iter().all(|s| s.position < given) {
            return true;
        }
        let total = required + slots.len();
        self.error_label(
            codes::ARG_COUNT,
            span,
            format!(
                "apply takes {total} argument{}, {given} given",
                if total == 1 { "" } else { "s" },
            ),
            "wrong number of arguments",
        );
        false
    }

    /// Reports argument `a`, passed for extern parameter `slot` of
    /// `callee` (a `block`: control or parser), as naming no instance.
    fn not_an_extern_instance(
        &mut self,
        a: &ast::Expr,
        slot: &ExternParam,
        callee: &str,
        what: &str,
        block: &str,
    ) {
        let subject = match &a.kind {
            ast::ExprKind::Name(n) => format!("`{}`", n.ident.name),
            _ => "this argument".to_string(),
        };
        self.error_label(
            codes::TYPE_MISMATCH,
            a.span,
            format!(
                "{subject} is not an extern instance: parameter `{}` of `{callee}` takes a {what} \
                 instance",
                slot.name
            ),
            format!("expected an instance declared in this {block} or at the top level"),
        );
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
        let slots = apply_slots(self.extern_params.controls.get(&sub.index()));
        if slots.is_empty() {
            return Some(args.to_vec());
        }
        let callee = self.prog.controls[sub].name.clone();
        let required = required_params(&self.prog.controls[sub].params);
        if !self.extern_args_present(required, &slots, args.len(), span) {
            self.extern_params
                .apply_bindings
                .entry((ctl.index(), i))
                .or_default();
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
            let want_inst = self.prog.controls[sub].externs[s.inst as usize].clone();
            let want = want_inst.kind.clone();
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
                self.not_an_extern_instance(a, s, &callee, &what, "control");
                ok = false;
                continue;
            };
            let got = self.prog.controls[ctl].externs[e as usize].clone();
            let role = ("parameter", s.name.as_str());
            if !self.extern_arg_fits(&got, (&want, want_inst.span), a.span, role, &callee) {
                ok = false;
                continue;
            }
            bound.push(e);
        }
        if !ok {
            // Reported: an empty binding keeps the instance from being
            // reported again as never applied.
            self.extern_params
                .apply_bindings
                .entry((ctl.index(), i))
                .or_default();
            return None;
        }
        match self.extern_params.apply_bindings.get(&(ctl.index(), i)) {
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
                self.extern_params
                    .apply_bindings
                    .insert((ctl.index(), i), bound);
            }
        }
        Some(other_args(args, &slots))
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
        let got = self.prog.controls[ctl].externs[e as usize].clone();
        self.extern_arg_fits(&got, (&want, p.span), a.span, role, callee)
            .then_some(e)
    }

    /// Whether an instance of kind `got`, passed to `param` (its role and
    /// name) of `callee`, is of the extern type `want`; reported if not.
    pub(crate) fn extern_arg_fits(
        &mut self,
        got: &ir::ExternInst,
        (want, want_span): (&ir::ExternKind, Span),
        span: Span,
        (role, param): (&str, &str),
        callee: &str,
    ) -> bool {
        let got_index = self.extern_index_ty.get(&got.span).cloned();
        let want_index = self.extern_index_ty.get(&want_span).cloned();
        let got = &got.kind;
        if !Self::extern_kind_fits(want, got) {
            let have = self.extern_kind_name(got);
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
            return false;
        }
        // v1model 20200408's index type `I` is part of the extern's type
        // (`register<T, I>`): an instance indexed by another type is
        // another type.
        match (got_index, want_index) {
            (Some(g), Some(w)) if g != w => {
                let (g, w) = (self.ty_name(&g), self.ty_name(&w));
                self.error_label(
                    codes::TYPE_MISMATCH,
                    span,
                    format!(
                        "cannot pass an instance indexed by {g} to {role} `{param}` of \
                         `{callee}`, whose index type `I` is {w}"
                    ),
                    "other index type",
                );
                false
            }
            _ => true,
        }
    }

    /// Every sub-control instance of `h` that has extern parameters was
    /// applied, so each is bound to an instance: one never applied would
    /// have code reaching no object.
    pub(crate) fn check_extern_params_bound(&mut self, h: Handle<ir::Control>) {
        let instances = self.prog.controls[h].instances.clone();
        for (i, (name, sub)) in instances.iter().enumerate() {
            let Some(slots) = self
                .extern_params
                .controls
                .get(&sub.index())
                .map(|v| v.iter().filter(|s| !s.ctor).cloned().collect::<Vec<_>>())
                .filter(|v| !v.is_empty())
            else {
                continue;
            };
            if self
                .extern_params
                .apply_bindings
                .contains_key(&(h.index(), i as u32))
                || self.instance_aliases.contains_key(&(h.index(), i as u32))
            {
                continue;
            }
            let first = slots[0].name.clone();
            let span = self
                .extern_params
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

    // ------------------------------------------------------------ parsers

    /// Declares the extern constructor parameters of parser `p`, whose
    /// arguments are `args` (in parameter order): one bound to a top-level
    /// instance is that instance, as the parser would name it; one bound to
    /// an instance of the calling parser becomes an extern instance of this
    /// one, bound once its handle is known ([`Self::instantiate_ctor_parser`]).
    /// The slots of the latter.
    pub(crate) fn declare_parser_ctor_externs(
        &mut self,
        p: &ast::ParserDecl,
        args: Vec<ParserArg>,
    ) -> Vec<ExternParam> {
        let params = self.extern_ctor_params(&p.ctor_params);
        if params.is_empty() {
            return Vec::new();
        }
        if params.len() != args.len() {
            self.bug(p.span, "extern constructor arguments of a parser lost");
            return Vec::new();
        }
        let callee = p.signature.name.name.clone();
        let mut local = Vec::new();
        for ((position, prm), arg) in params.into_iter().zip(args) {
            let (name, span) = match arg {
                ParserArg::Local(_) => {
                    local.push((position, prm));
                    continue;
                }
                ParserArg::Global(name, span) => (name, span),
            };
            let Some(want) = self.extern_param_kind(&prm) else {
                continue;
            };
            // The parameter's index type `I`, kept under its span as
            // `declare_extern_params` keeps it, for `extern_arg_fits`.
            if let ast::TypeKind::Named { name: ty, args } = &prm.ty.kind
                && !self.v1model_type_args(&ty.ident.name, args, prm.span)
            {
                continue;
            }
            match self.global_in_body(&name, span) {
                GlobalUse::Index(i) => {
                    let Some(got) = self.body_extern(i) else {
                        self.bug(span, "top-level extern instance not declared");
                        continue;
                    };
                    let role = ("constructor parameter", prm.name.name.as_str());
                    if self.extern_arg_fits(&got, (&want, prm.span), span, role, &callee) {
                        self.declare(&prm.name, Sym::Extern(i));
                    }
                }
                GlobalUse::Reported => {}
                GlobalUse::NotHere => self.bug(span, "a parser body outside a parser"),
            }
        }
        self.declare_extern_params(None, &local, true)
    }

    /// The extern instance argument `a` names in the parser body being
    /// checked: one of its own, or a top-level one (declared in the body at
    /// its first use); its index among the body's instances.
    fn parser_instance_arg(&mut self, a: &ast::Expr) -> Option<u32> {
        let ast::ExprKind::Name(n) = &a.kind else {
            return None;
        };
        match self.lookup(n) {
            Some(Sym::Extern(e)) => Some(*e),
            Some(Sym::GlobalExtern) => match self.global_in_body(&n.ident.name, a.span) {
                GlobalUse::Index(i) => Some(i),
                GlobalUse::Reported | GlobalUse::NotHere => None,
            },
            _ => None,
        }
    }

    /// The instance passed as argument `a` to extern constructor parameter
    /// `p` of parser `callee`: in a parser, one of its extern instances;
    /// where no parser calls (`V1Switch(..)`), a top-level instance.
    pub(crate) fn parser_ctor_arg(
        &mut self,
        callee: &str,
        p: &ast::Param,
        a: &ast::Expr,
    ) -> Option<ParserArg> {
        let want = self.extern_param_kind(p)?;
        let what = self.extern_kind_name(&want);
        let in_parser = self.body.as_ref().map(|b| b.kind);
        match in_parser {
            Some(BodyKind::Parser) => {
                if let Some(e) = self.parser_instance_arg(a) {
                    let got = self.body_extern(e)?;
                    let role = ("constructor parameter", p.name.name.as_str());
                    return self
                        .extern_arg_fits(&got, (&want, p.span), a.span, role, callee)
                        .then_some(ParserArg::Local(e));
                }
            }
            None => {
                if let ast::ExprKind::Name(n) = &a.kind
                    && matches!(self.lookup(n), Some(Sym::GlobalExtern))
                {
                    return Some(ParserArg::Global(n.ident.name.clone(), a.span));
                }
            }
            Some(_) => {}
        }
        self.error_label(
            codes::TYPE_MISMATCH,
            a.span,
            format!(
                "this argument is not an extern instance: constructor parameter `{}` of \
                 `{callee}` takes a {what} instance",
                p.name.name
            ),
            "expected an instance declared in this parser or at the top level",
        );
        None
    }

    /// The arguments of `apply` on parser `sub` in a state of the parser
    /// being checked, once those for its extern parameters are taken out:
    /// each must name an extern instance of the caller of the parameter's
    /// type, and binds the parameter to it once the caller is checked
    /// ([`Self::bind_parser_externs`]).
    pub(crate) fn parser_apply_extern_args<'a>(
        &mut self,
        sub: Handle<ir::Parser>,
        args: &[&'a ast::Expr],
        span: Span,
    ) -> Option<Vec<&'a ast::Expr>> {
        let slots = apply_slots(self.extern_params.parsers.get(&sub.index()));
        if slots.is_empty() {
            return Some(args.to_vec());
        }
        let callee = self.prog.parsers[sub].name.clone();
        let required = required_params(&self.prog.parsers[sub].params);
        if !self.extern_args_present(required, &slots, args.len(), span) {
            return None;
        }
        let mut bound = Vec::new();
        for s in &slots {
            let want_inst = self.prog.parsers[sub].externs[s.inst as usize].clone();
            let want = want_inst.kind.clone();
            let what = self.extern_kind_name(&want);
            let a = args[s.position];
            let Some(e) = self.parser_instance_arg(a) else {
                self.not_an_extern_instance(a, s, &callee, &what, "parser");
                continue;
            };
            let got = self.body_extern(e)?;
            let role = ("parameter", s.name.as_str());
            if self.extern_arg_fits(&got, (&want, want_inst.span), a.span, role, &callee) {
                bound.push(ParserBind {
                    callee: sub,
                    inst: s.inst,
                    passed: e,
                    span,
                });
            }
        }
        if bound.len() != slots.len() {
            return None;
        }
        self.extern_params.parser_pending.extend(bound);
        Some(other_args(args, &slots))
    }

    /// Records the bindings `pending` that parser `h` (just checked) made
    /// for the extern parameters of the parsers it applies or
    /// instantiates. A parser's extern objects are one per declaration,
    /// so each parameter is bound once.
    pub(crate) fn bind_parser_externs(&mut self, h: Handle<ir::Parser>, pending: Vec<ParserBind>) {
        let mut refused = std::collections::HashSet::new();
        for b in pending {
            let key = (b.callee.index(), b.inst);
            let to = (h.index(), b.passed);
            match self.extern_params.parser_bindings.get(&key) {
                Some(&before) if before != to => {
                    if refused.insert(b.callee) {
                        let name = self.prog.parsers[b.callee].name.clone();
                        self.unsupported(
                            b.span,
                            &format!(
                                "applying parser `{name}` with other extern instances than \
                                 before (a parser's extern objects are one per declaration, so \
                                 its extern parameters are bound once)"
                            ),
                        );
                    }
                }
                _ => {
                    self.extern_params.parser_bindings.insert(key, to);
                }
            }
        }
    }

    /// Every extern parameter of a parser is bound: one never applied
    /// would have code reaching no object. Called once all is checked.
    pub(crate) fn check_parser_extern_params_bound(&mut self) {
        let mut unbound = Vec::new();
        for (h, p) in self.prog.parsers.iter() {
            let Some(slots) = self.extern_params.parsers.get(&h.index()) else {
                continue;
            };
            if let Some(s) = slots.iter().find(|s| {
                !self
                    .extern_params
                    .parser_bindings
                    .contains_key(&(h.index(), s.inst))
            }) {
                let span = p.externs[s.inst as usize].span;
                unbound.push((span, p.name.clone(), s.name.clone()));
            }
        }
        for (span, parser, param) in unbound {
            self.unsupported(
                span,
                &format!(
                    "a parser with extern parameters that is never applied (`{parser}`, \
                     parameter `{param}`): its parameters are bound where it is applied"
                ),
            );
        }
    }
}

/// The apply (not constructor) extern parameters among a block's `slots`.
pub(super) fn apply_slots(slots: Option<&Vec<ExternParam>>) -> Vec<ExternParam> {
    slots
        .map(|v| v.iter().filter(|s| !s.ctor).cloned().collect())
        .unwrap_or_default()
}

/// How many of a block's apply `params` an argument must be given for.
fn required_params(params: &[ir::BlockParam]) -> usize {
    params.iter().filter(|p| p.default.is_none()).count()
}

/// `args` without those passed for the extern parameters `slots`.
fn other_args<'a>(args: &[&'a ast::Expr], slots: &[ExternParam]) -> Vec<&'a ast::Expr> {
    args.iter()
        .enumerate()
        .filter(|(k, _)| !slots.iter().any(|s| s.position == *k))
        .map(|(_, a)| *a)
        .collect()
}
