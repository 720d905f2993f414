//! Controls: declarations, copies per instance, bodies and the top-level
//! extern instances they use (P4_16 spec §13).

use super::ctor::ctor_key;
use super::{GlobalUse, article, name_spec, split_int_params};
use crate::check::{Body, BodyKind, Checker, Sym, codes};
use crate::diag::{Diagnostic, Span};
use crate::front::ast;
use crate::ir::{self, Handle, Ty};

impl Checker {
    // -------------------------------------------------------------- control
    pub(crate) fn control_decl(&mut self, c: &ast::ControlDecl) {
        // Directionless `int` apply parameters take compile-time values at
        // each apply (P4_16 §6.8: directionless parameters of a control are
        // compile-time known; p4c's issue3394): the control is checked as
        // if they were constructor parameters, once per list of values,
        // and `C.apply(3, r)` applies the copy for 3 ([`Self::apply_int_args`]).
        if c.ctor_params.is_empty()
            && let Some((positions, ctor, params)) = split_int_params(&c.signature.params)
        {
            let mut moved = c.clone();
            moved.ctor_params = ctor;
            moved.signature.params = params;
            self.apply_int_params
                .insert(c.signature.name.name.clone(), positions);
            return self.control_decl(&moved);
        }
        if !c.signature.type_params.is_empty() || !c.ctor_params.is_empty() {
            // Checked once per distinct set of type and constructor
            // arguments, at each instantiation, and once here for a
            // control that is never instantiated.
            self.ctor_controls
                .insert(c.signature.name.name.clone(), c.clone());
            self.declare(
                &c.signature.name,
                Sym::CtorControl(c.signature.name.name.clone()),
            );
            self.trial_ctor(
                &c.signature.name.name,
                &c.signature.type_params,
                &c.ctor_params,
                |k, tys, values| {
                    k.ctor_control_body(c, tys, values);
                },
            );
            return;
        }
        if let Some(h) = self.control_body(c) {
            self.plain_controls
                .insert(c.signature.name.name.clone(), c.clone());
            self.declare(&c.signature.name, Sym::Control(h));
        }
    }

    /// Whether a control's instances need copies of their own: p4c names
    /// the actions of a control by its instance's path (`ingress.c1.a`),
    /// one P4Info action per instance, and our actions are one IR action
    /// per declaration, so each instance of a control that declares
    /// actions (or holds instances that may) is checked into an IR control
    /// of its own.
    fn needs_own_copy(&self, h: Handle<ir::Control>) -> bool {
        let c = &self.prog.controls[h];
        self.instantiated_controls.contains(&h.index())
            && (!c.actions.is_empty() || !c.instances.is_empty())
    }

    /// The control an instance of plain control `h` (declared as `name`)
    /// stands for: `h` itself for its first instance, a fresh check of its
    /// declaration for the later ones when they need copies of their own.
    pub(crate) fn instance_copy(&mut self, h: Handle<ir::Control>) -> Handle<ir::Control> {
        let name = self.prog.controls[h].name.clone();
        let copy = if self.needs_own_copy(h) {
            let before = self.diags.len();
            let copy = self.plain_controls.get(&name).cloned().and_then(|decl| {
                self.in_top_scope_with(&[], &[], Vec::new(), |c| c.control_body(&decl))
            });
            // The declaration's own check already reported these.
            let fresh: Vec<Diagnostic> = self
                .diags
                .split_off(before)
                .into_iter()
                .filter(|d| !self.diags.contains(d))
                .collect();
            self.diags.extend(fresh);
            copy
        } else {
            None
        };
        let h = copy.unwrap_or(h);
        self.instantiated_controls.insert(h.index());
        h
    }

    /// Instantiates a control with constructor parameters: the declaration
    /// is checked with the parameters bound to the (constant) arguments, in
    /// the top-level scope.
    pub(crate) fn instantiate_ctor_control(
        &mut self,
        name: &str,
        tys: &[Ty],
        args: &[&ast::Expr],
        span: Span,
    ) -> Option<Handle<ir::Control>> {
        self.ctor_used.insert(name.to_string());
        let decl = self.ctor_controls.get(name)?.clone();
        self.type_arg_count("control", name, &decl.signature.type_params, tys, span)?;
        let generic = (decl.signature.type_params.as_slice(), tys);
        let (values, passed) =
            self.ctor_values("control", name, generic, &decl.ctor_params, args, span)?;
        let externs = std::mem::take(&mut self.extern_params.ctor_args);
        let globals = std::mem::take(&mut self.extern_params.ctor_global_args);
        let mut key = ctor_key(name, tys, &values, &passed);
        key.1
            .extend(globals.iter().map(|(_, g, _)| format!("top-level {g}")));
        let instance_args: Vec<u32> = passed.iter().map(|p| p.2).collect();
        if let Some(h) = self.ctor_cache.get(&key).copied()
            && !self.needs_own_copy(h)
        {
            self.pending_instance_args = instance_args;
            self.extern_params.pending_ctor = externs;
            self.instantiated_controls.insert(h.index());
            return Some(h);
        }
        self.pending_aliases = passed.into_iter().map(|(n, c, _)| (n, c)).collect();
        self.extern_params.pending_global_ctor = globals;
        let h = self.ctor_control_body(&decl, tys, values);
        self.pending_aliases.clear();
        self.extern_params.pending_global_ctor.clear();
        if let Some(h) = h {
            self.ctor_cache.entry(key).or_insert(h);
            self.pending_instance_args = instance_args;
            self.extern_params.pending_ctor = externs;
            self.instantiated_controls.insert(h.index());
        }
        h
    }

    /// Checks control `decl` with its type parameters bound to `tys` and
    /// its constructor parameters bound to `values`, in the top-level scope.
    fn ctor_control_body(
        &mut self,
        decl: &ast::ControlDecl,
        tys: &[Ty],
        values: Vec<(ast::Ident, Sym)>,
    ) -> Option<Handle<ir::Control>> {
        self.in_top_scope_with(&decl.signature.type_params, tys, values, |c| {
            c.control_body(decl)
        })
    }

    /// Checks a control's locals and apply block into a new IR control.
    fn control_body(&mut self, c: &ast::ControlDecl) -> Option<Handle<ir::Control>> {
        let aliases = std::mem::take(&mut self.pending_aliases);
        let global_ctor = std::mem::take(&mut self.extern_params.pending_global_ctor);
        let h = self.prog.controls.append(
            ir::Control {
                name: c.signature.name.name.clone(),
                params: Vec::new(),
                locals: Vec::new(),
                local_inits: Vec::new(),
                externs: Vec::new(),
                instances: Vec::new(),
                tables: Vec::new(),
                actions: Vec::new(),
                apply: Vec::new(),
                apply_vars: Vec::new(),
            },
            c.span,
        );
        self.push_scope();
        self.block_name = Some(c.signature.name.name.clone());
        // Extern instances passed as directionless apply parameters are
        // instances of this control bound at each apply (`check::extern_params`).
        let (plain, externs) = self.split_extern_params(&c.signature.params);
        let params = self.block_params(&plain, "packet_out");
        self.prog.controls[h].params = params;
        self.declare_control_extern_params(h, &externs, false);
        // Extern constructor parameters: bound where the control is
        // instantiated (`ExternParamState::ctor_bindings`).
        let mut ctor_externs = self.extern_ctor_params(&c.ctor_params);
        ctor_externs.retain(|(_, p)| !global_ctor.iter().any(|(g, ..)| g.name == p.name));
        self.declare_control_extern_params(h, &ctor_externs, true);
        // Control-typed constructor parameters: instances of this control
        // that the instance tree points at the instances passed.
        for (k, (n, sub)) in aliases.into_iter().enumerate() {
            let instances = &mut self.prog.controls[h].instances;
            let idx = instances.len() as u32;
            instances.push((n.name.clone(), sub));
            self.instance_aliases.insert((h.index(), idx), k);
            self.declare(&n, Sym::SubControl(idx));
        }
        self.body = Some(Body {
            kind: BodyKind::Apply,
            vars: Vec::new(),
            ret: Ty::Void,
            control: Some(h),
            loops: 0,
            externs: Vec::new(),
        });
        for g in self.global_externs.clone() {
            self.global_extern(&g, h);
        }
        for (p, g, arg) in global_ctor {
            self.global_ctor_param(h, &p, &g, arg);
        }
        for d in &c.locals {
            self.local_structured_annotations(d);
            match d {
                ast::Decl::Const(k) => {
                    self.const_decl(k);
                }
                ast::Decl::Var(v) => {
                    let Some((ty, init)) = self.block_local(v) else {
                        continue;
                    };
                    let nominal = self.nominal_of_type(&v.ty);
                    if let Some(init) = &init {
                        self.check_declared_nominal(&v.ty, init, v.span);
                    }
                    let ctl = &mut self.prog.controls[h];
                    let i = ctl.locals.len() as u32;
                    ctl.locals.push(ir::Var {
                        name: v.name.name.clone(),
                        ty: ty.clone(),
                        param: None,
                    });
                    if let Some(init) = init {
                        ctl.local_inits.push((i, init));
                    }
                    self.declare(
                        &v.name,
                        Sym::Var(
                            ir::VarRef::BlockLocal(i),
                            ty,
                            true,
                            Some(nominal),
                            self.tuple_nominals(&v.ty),
                        ),
                    );
                }
                ast::Decl::Action(a) => {
                    if let Some(ah) = self.action_decl(a, Some(h)) {
                        self.prog.controls[h].actions.push(ah);
                        self.declare(&a.name, Sym::Action(ah));
                    }
                }
                ast::Decl::Table(t) => self.table_decl(t, h),
                ast::Decl::Instantiation(i) => self.control_instantiation(i, h),
                ast::Decl::Function(f) => {
                    let saved = self.body.take();
                    self.function_decl(f);
                    self.body = saved;
                }
                other => self.error(
                    codes::NOT_ALLOWED_HERE,
                    other.span(),
                    "this declaration is not allowed in a control",
                ),
            }
        }
        self.check_meter_reads_owned(h);
        self.check_direct_uses_owned(h);
        // The apply block gets fresh locals.
        if let Some(b) = self.body.as_mut() {
            b.vars.clear();
        }
        let apply = self.block(&c.apply);
        let Some(body) = self.body.take() else {
            self.bug(c.span, "control body state lost");
            self.pop_scope();
            return None;
        };
        self.prog.controls[h].apply = apply;
        self.prog.controls[h].apply_vars = body.vars;
        self.check_extern_params_bound(h);
        self.pop_scope();
        self.block_name = None;
        Some(h)
    }

    /// Declares top-level extern instance `g` in control `h`, named as p4c
    /// names it: its `@name`, or its own name, never prefixed by the control.
    fn global_extern(&mut self, g: &ast::Instantiation, h: Handle<ir::Control>) {
        let local = global_copy(g);
        let before = self.diags.len();
        self.control_instantiation(&local, h);
        // Report a bad global instance once, not once per control.
        if self.diags.len() > before && self.prog.controls.len() > 1 {
            self.diags.truncate(before);
        }
    }

    /// Extern constructor parameter `p` of control `h` in `V1Switch(..)`,
    /// given top-level instance `global` (the argument at `arg`): declared
    /// as another copy of it in `h` (named `.global` for the control plane,
    /// so one object), and checked against the parameter's type.
    fn global_ctor_param(
        &mut self,
        h: Handle<ir::Control>,
        p: &ast::Param,
        global: &str,
        arg: Span,
    ) {
        let Some(g) = self.global_externs.iter().find(|g| g.name.name == global) else {
            self.bug(p.span, "top-level extern instance not found");
            return;
        };
        let mut local = global_copy(g);
        local.name = p.name.clone();
        let before = self.prog.controls[h].externs.len();
        self.control_instantiation(&local, h);
        let (Some(got), Some(want)) = (
            self.prog.controls[h].externs.get(before).cloned(),
            self.extern_param_kind(p),
        ) else {
            return;
        };
        let role = ("constructor parameter", p.name.name.as_str());
        let callee = self.prog.controls[h].name.clone();
        self.extern_arg_fits(&got, (&want, p.span), arg, role, &callee);
    }

    /// Top-level extern instance `name` used in the parser, function or
    /// top-level action being checked: its index in the body's instances,
    /// where it is declared at its first use (as each control declares all
    /// of them).
    pub(crate) fn global_in_body(&mut self, name: &str, span: Span) -> GlobalUse {
        let Some(body) = self.body.as_ref() else {
            return GlobalUse::NotHere;
        };
        if !matches!(
            (body.kind, body.control),
            (BodyKind::Parser | BodyKind::Function, _) | (BodyKind::Action, None)
        ) {
            return GlobalUse::NotHere;
        }
        if let Some(i) = body
            .externs
            .iter()
            .position(|e| e.global.as_deref() == Some(name))
        {
            return GlobalUse::Index(i as u32);
        }
        let Some(g) = self.global_externs.iter().find(|g| g.name.name == name) else {
            return GlobalUse::NotHere;
        };
        let g = g.clone();
        if let ast::TypeKind::Named { name: ty, .. } = &g.ty.kind
            && let Some(
                kind @ ("direct_counter" | "direct_meter" | "action_profile" | "action_selector"),
            ) = crate::v1model::object(&ty.ident.name).map(|o| o.name)
        {
            self.error_label(
                codes::NOT_ALLOWED_HERE,
                span,
                format!(
                    "`{name}` is {} {kind}: it belongs to a table, and its methods run only \
                     in that table's control",
                    article(kind)
                ),
                "used outside a control",
            );
            return GlobalUse::Reported;
        }
        let local = global_copy(&g);
        let before = self.diags.len();
        self.push_scope();
        self.block_instantiation(&local, None);
        self.pop_scope();
        if self.diags.len() > before {
            // The controls, which declare every top-level instance,
            // report what is wrong with it.
            self.diags.truncate(before);
            return GlobalUse::Reported;
        }
        let Some(last) = self.body.as_mut().and_then(|b| b.externs.last_mut()) else {
            self.bug(span, "top-level extern instance not declared");
            return GlobalUse::Reported;
        };
        last.global = Some(name.to_string());
        GlobalUse::Index(self.body.as_ref().map_or(0, |b| b.externs.len() as u32 - 1))
    }
}

/// A top-level extern instance as a block declares it: named as p4c names
/// it, its `@name` or its own name, never prefixed by the block.
fn global_copy(g: &ast::Instantiation) -> ast::Instantiation {
    let spec = name_spec(&g.annotations, &g.name.name);
    let absolute = format!(".{}", spec.name);
    let name_annotation = ast::Annotation {
        name: ast::Ident {
            name: "name".into(),
            span: g.span,
        },
        body: ast::AnnotationBody::Unstructured {
            raw: format!("{absolute:?}"),
            exprs: Some(vec![ast::Expr {
                kind: ast::ExprKind::Str(absolute),
                span: g.span,
            }]),
        },
        span: g.span,
    };
    let mut local = g.clone();
    local.annotations.retain(|a| a.name.name != "name");
    local.annotations.push(name_annotation);
    local
}
