//! Instantiations inside controls: sub-controls and sub-parsers, extern
//! instances and their initializer blocks (P4_16 spec §11.3.1).

use super::{article, name_spec, register_cell_width};
use crate::check::program_info::NameSpec;
use crate::check::{Checker, Sym, codes};
use crate::diag::Span;
use crate::front::ast;
use crate::ir::{self, Handle, Ty};
use p4_target::info::CounterUnit;

impl Checker {
    /// An initializer block (`= { ... }`) implements the abstract methods of
    /// an extern (P4_16 §11.3.1); p4c refuses one on an instance of a
    /// control, parser or package (its decl-instantiation-init-non-extern).
    pub(crate) fn initializer_not_extern(&mut self, i: &ast::Instantiation) {
        let Some(init) = &i.initializer else { return };
        let span = init.first().map(|d| d.span()).unwrap_or(i.span);
        self.error_label(
            codes::NOT_ALLOWED_HERE,
            span,
            format!(
                "`{}` is not an extern instance: only an extern's instance takes an initializer \
                 block implementing its abstract methods",
                i.name.name
            ),
            "initializer block",
        );
    }

    /// An extern instance's initializer block may only implement the
    /// extern's abstract methods (P4_16 §11.3.1): p4c refuses a block on an
    /// extern that has none ("instance initializers for extern without
    /// abstract methods", issue3307's error cuts) and a function naming no
    /// abstract method of it.
    pub(crate) fn initializer_of_extern(&mut self, i: &ast::Instantiation, ext: &str) {
        let Some(init) = &i.initializer else { return };
        let abstracts: Vec<String> = self
            .user_extern_asts
            .get(ext)
            .map(|(e, _)| {
                e.members
                    .iter()
                    .filter_map(|m| match m {
                        ast::ExternMember::Method(f) if f.is_abstract => Some(f.name.name.clone()),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        if abstracts.is_empty() {
            let span = init.first().map(|d| d.span()).unwrap_or(i.span);
            self.error_label(
                codes::NOT_ALLOWED_HERE,
                span,
                format!(
                    "extern `{ext}` has no abstract methods, so its instance `{}` takes no \
                     initializer block",
                    i.name.name
                ),
                "initializer block",
            );
            return;
        }
        for d in init {
            let Some(n) = d.name() else { continue };
            if !abstracts.contains(&n.name) {
                self.error_label(
                    codes::NOT_ALLOWED_HERE,
                    n.span,
                    format!("`{}` is not an abstract method of extern `{ext}`", n.name),
                    "not abstract in the extern",
                );
            }
        }
    }

    /// An instantiation that declares no name in scope.
    pub(super) fn control_instantiation_anon(
        &mut self,
        i: &ast::Instantiation,
        h: Handle<ir::Control>,
    ) {
        self.push_scope();
        self.control_instantiation(i, h);
        self.pop_scope();
    }

    pub(crate) fn control_instantiation(&mut self, i: &ast::Instantiation, h: Handle<ir::Control>) {
        self.block_instantiation(i, Some(h));
    }

    /// An instantiation in control `owner`, or (`None`) an extern instance
    /// of the parser or function body being checked.
    pub(super) fn block_instantiation(
        &mut self,
        i: &ast::Instantiation,
        owner: Option<Handle<ir::Control>>,
    ) {
        // Instantiations in its constructor arguments are named after it.
        let outer = self.instantiating.replace(i.name.name.clone());
        self.control_instantiation_named(i, owner);
        self.instantiating = outer;
    }

    fn control_instantiation_named(
        &mut self,
        i: &ast::Instantiation,
        owner: Option<Handle<ir::Control>>,
    ) {
        let ast::TypeKind::Named { name, args: targs } = &i.ty.kind else {
            self.unsupported(i.span, "this instantiation");
            return;
        };
        let sym = self.lookup(name).cloned();
        match &sym {
            Some(Sym::ExternDecl(ext)) => self.initializer_of_extern(i, ext),
            _ => self.initializer_not_extern(i),
        }
        if let Some(Sym::ExternDecl(ext)) = &sym
            && self.ctorless_externs.contains(ext)
        {
            self.error_label(
                codes::WRONG_KIND,
                i.ty.span,
                format!("extern `{ext}` declares no constructor, so it cannot be instantiated"),
                "no constructor",
            );
            return;
        }
        // A user extern's constructor, picked by the arguments.
        let user_ctor = match &sym {
            Some(Sym::ExternDecl(ext)) => match self.user_ctor(ext, &i.args, i.span) {
                Some(Some(ctor)) => Some(ctor),
                Some(None) => return,
                None => None,
            },
            _ => None,
        };
        let ctor_index = user_ctor.as_ref().map_or(0, |(index, _)| *index);
        // Constructor arguments in parameter order, defaults filled in.
        let params = match &sym {
            Some(Sym::CtorControl(n)) => self
                .ctor_controls
                .get(n)
                .map(|d| crate::check::ParamSpec::of(&d.ctor_params)),
            _ => crate::v1model::object(&name.ident.name)
                .map(|o| crate::check::ParamSpec::named(o.ctor.iter().map(|p| p.name.to_string())))
                .or_else(|| user_ctor.map(|(_, params)| params)),
        };
        let bound: Vec<ast::Expr> = match params {
            Some(params) => {
                let what = format!("`{}`", name.ident.name);
                match self.bind_args(&what, &params, &i.args, i.span) {
                    Some(b) => b,
                    None => return,
                }
            }
            None => i.args.iter().map(|a| a.value.clone()).collect(),
        };
        let args: Vec<&ast::Expr> = bound.iter().collect();
        let sub = match &sym {
            Some(Sym::Control(sub)) => {
                if !args.is_empty() {
                    self.error(
                        codes::ARG_COUNT,
                        i.span,
                        format!(
                            "control `{}` takes no constructor arguments",
                            name.ident.name
                        ),
                    );
                    return;
                }
                Some(self.instance_copy(*sub))
            }
            Some(Sym::CtorControl(n)) if self.apply_int_params.contains_key(n.as_str()) => {
                self.unsupported(
                    i.span,
                    &format!(
                        "instances of a control with directionless `int` apply parameters \
                         (`{n}`); apply it directly, `{n}.apply(..)`"
                    ),
                );
                return;
            }
            Some(Sym::CtorControl(n)) => {
                let tys: Option<Vec<Ty>> = targs.iter().map(|t| self.ty(t)).collect();
                let Some(tys) = tys else { return };
                match self.instantiate_ctor_control(&n.clone(), &tys, &args, i.span) {
                    Some(s) => Some(s),
                    None => return,
                }
            }
            _ => None,
        };
        if let Some(sub) = sub {
            let Some(h) = owner else {
                self.bug(i.span, "a control instance outside a control");
                return;
            };
            let ctl = &mut self.prog.controls[h];
            let idx = ctl.instances.len() as u32;
            ctl.instances.push((i.name.name.clone(), sub));
            self.extern_params
                .instance_spans
                .insert((h.index(), idx), i.span);
            let externs = std::mem::take(&mut self.extern_params.pending_ctor);
            if !externs.is_empty() {
                self.extern_params
                    .ctor_bindings
                    .insert((h.index(), idx), externs);
            }
            let passed = std::mem::take(&mut self.pending_instance_args);
            if !passed.is_empty() {
                self.instance_args.insert((h.index(), idx), passed);
            }
            self.declare(&i.name, Sym::SubControl(idx));
            return;
        }
        let kind_name = name.ident.name.as_str();
        let unit = |c: &mut Checker, e: &ast::Expr| -> Option<CounterUnit> {
            let x = c.expr(e, None)?;
            let ir::ExprKind::EnumMember(eh, m) = x.kind else {
                c.error(
                    codes::TYPE_MISMATCH,
                    e.span,
                    "expected a CounterType or MeterType member",
                );
                return None;
            };
            Some(match c.prog.enums[eh].members[m as usize].0.as_str() {
                "packets" => CounterUnit::Packets,
                "bytes" => CounterUnit::Bytes,
                _ => CounterUnit::Both,
            })
        };
        let want = |c: &mut Checker, n: usize| -> bool {
            if args.len() != n {
                c.error_label(
                    codes::ARG_COUNT,
                    i.span,
                    format!(
                        "`{kind_name}` takes {n} constructor argument{}, {} given",
                        if n == 1 { "" } else { "s" },
                        args.len()
                    ),
                    "wrong number of arguments",
                );
                return false;
            }
            true
        };
        if let Some(Sym::ExternDecl(_)) = &sym
            && crate::v1model::object(kind_name).is_none()
        {
            use crate::check::user_externs::UserType;
            match self.user_extern_type(kind_name, targs, &args, ctor_index, i.span) {
                UserType::Found(u) => {
                    if let Some(kind) = self.user_instance(u, ctor_index, &args, i.span) {
                        self.add_extern(owner, i, kind);
                    }
                    return;
                }
                UserType::Reported => return,
                UserType::NotUser => {}
            }
        }
        if !self.v1model_type_args(kind_name, targs, i.span) {
            return;
        }
        let kind = match kind_name {
            "register" => {
                if !want(self, 1) {
                    return;
                }
                let Some(t) = targs.first() else {
                    self.error(
                        codes::ARG_COUNT,
                        i.ty.span,
                        "register needs a cell type: `register<bit<32>>`",
                    );
                    return;
                };
                let Some(ty) = self.ty(t) else { return };
                // Cells are stored as bit strings: any scalar whose value
                // is its bits (bmv2 registers hold bit strings too).
                // A struct of such scalars (nested structs too) is held as
                // its fields concatenated, the first in the high bits.
                // A lone bit<W>/int<W> may be wider than 128 bits (cells of
                // u64 limbs).
                let lone_wide = matches!(ty, Ty::Bit(w) | Ty::Int(w) if w > 128);
                // A lone bit<0>/int<0> cell holds its only value, 0 (P4_16
                // §7.1.6.2); a struct of no bits stays refused.
                let lone_zero = matches!(ty, Ty::Bit(0) | Ty::Int(0));
                let width = register_cell_width(&ty, &self.prog)
                    .filter(|w| (1..=128).contains(w) || lone_wide || lone_zero);
                let Some(width) = width else {
                    self.unsupported(
                        t.span,
                        "registers whose cells are not bit<W>, int<W>, bool, a serializable enum or a struct of these (at most 128 bits in all, or a single bit<W>/int<W> of any width)",
                    );
                    return;
                };
                let Some(size) = self.const_u32(args[0], "register size") else {
                    return;
                };
                ir::ExternKind::Register {
                    cell: ty,
                    width,
                    size,
                }
            }
            "counter" => {
                if !want(self, 2) {
                    return;
                }
                let Some(size) = self.const_u32(args[0], "counter size") else {
                    return;
                };
                let Some(u) = unit(self, args[1]) else { return };
                ir::ExternKind::Counter { size, unit: u }
            }
            "direct_counter" => {
                if !want(self, 1) {
                    return;
                }
                let Some(u) = unit(self, args[0]) else { return };
                ir::ExternKind::DirectCounter(u)
            }
            "meter" => {
                if !want(self, 2) {
                    return;
                }
                let Some(size) = self.const_u32(args[0], "meter size") else {
                    return;
                };
                let Some(u) = unit(self, args[1]) else { return };
                ir::ExternKind::Meter { size, unit: u }
            }
            "direct_meter" => {
                if !want(self, 1) {
                    return;
                }
                let Some(u) = unit(self, args[0]) else { return };
                ir::ExternKind::DirectMeter(u)
            }
            "action_profile" => {
                if !want(self, 1) {
                    return;
                }
                let Some(size) = self.const_u32(args[0], "action profile size") else {
                    return;
                };
                ir::ExternKind::ActionProfile(size)
            }
            "action_selector" => {
                if !want(self, 3) {
                    return;
                }
                let Some(algo) = self.hash_algo(args[0]) else {
                    return;
                };
                let Some(size) = self.const_u32(args[1], "selector size") else {
                    return;
                };
                let Some(w) = self.const_u32(args[2], "selector output width") else {
                    return;
                };
                ir::ExternKind::ActionSelector(algo, size, w)
            }
            _ => {
                match sym {
                    Some(Sym::ExternDecl(_)) => {
                        let what = format!("the extern `{kind_name}`");
                        self.refused_user_extern(kind_name, &what, i.span)
                    }
                    Some(_) => self.error(
                        codes::WRONG_KIND,
                        name.span,
                        format!("`{kind_name}` cannot be instantiated"),
                    ),
                    None => self.error_label(
                        codes::UNKNOWN_NAME,
                        name.span,
                        format!("cannot find `{kind_name}` in this scope"),
                        "not declared",
                    ),
                }
                return;
            }
        };
        self.add_extern(owner, i, kind);
    }

    /// Checks the type arguments of an instance of v1model's `counter`,
    /// `meter` or `register` against the declaration of the version the
    /// program picked (`crate::v1model::Object::type_params`), and records
    /// the index type `I` of the versions that have one. False when refused.
    pub(crate) fn v1model_type_args(
        &mut self,
        kind_name: &str,
        targs: &[ast::Type],
        span: Span,
    ) -> bool {
        if !matches!(kind_name, "counter" | "meter" | "register") {
            return true;
        }
        let Some(obj) = crate::v1model::object(kind_name) else {
            return true;
        };
        // `register` without any is reported where its cell type is read.
        if kind_name == "register" {
            let Some(cell) = targs.first() else {
                return true;
            };
            let nominal = self.nominal_of_type(cell);
            self.register_cell_nominal.insert(span, nominal);
        }
        let version = self.v1model_version;
        let params = obj.type_params(version);
        if targs.len() != params.len() {
            let declared = if params.is_empty() {
                kind_name.to_string()
            } else {
                format!("{kind_name}<{}>", params.join(", "))
            };
            let since = crate::v1model::INDEX_TYPE_PARAM_SINCE;
            let why = if params.len() > targs.len() {
                format!(
                    "the index type `I` came with v1model {since}, and a generic extern needs all its type arguments (p4c: \"Type parameters must be supplied for constructor\")"
                )
            } else {
                format!(
                    "the index type argument `I` came with v1model {since}: `#define V1MODEL_VERSION {since}` before `#include <v1model.p4>` picks it"
                )
            };
            self.error_label(
                codes::ARG_COUNT,
                span,
                format!(
                    "`{kind_name}` takes {} type argument{} in v1model {version}, {} given; {why}",
                    params.len(),
                    if params.len() == 1 { "" } else { "s" },
                    targs.len()
                ),
                format!("declared `{declared}`"),
            );
            return false;
        }
        if let Some(crate::v1model::IndexTy::TypeArg(k)) = obj.index_ty(version) {
            let Some(ty) = self.ty(&targs[k]) else {
                return false;
            };
            // The runtime indexes its arrays with the index's value: a
            // bit string (p4c's BMv2 back end takes only those too).
            if !matches!(ty, Ty::Bit(_)) {
                let msg = format!("`{kind_name}` index types other than bit<W>");
                self.unsupported(targs[k].span, &msg);
                return false;
            }
            self.extern_index_ty.insert(span, ty);
        }
        true
    }

    /// Adds extern instance `i` of `kind` to control `owner`, or (`None`)
    /// to the parser or function body being checked, and declares it.
    fn add_extern(
        &mut self,
        owner: Option<Handle<ir::Control>>,
        i: &ast::Instantiation,
        kind: ir::ExternKind,
    ) {
        if owner.is_none()
            && matches!(
                kind,
                ir::ExternKind::DirectCounter(_)
                    | ir::ExternKind::DirectMeter(_)
                    | ir::ExternKind::ActionProfile(_)
                    | ir::ExternKind::ActionSelector(..)
            )
        {
            self.error_label(
                codes::NOT_ALLOWED_HERE,
                i.span,
                format!(
                    "`{}`: {} {} belongs to a table, and tables are only in controls",
                    i.name.name,
                    article(kind.type_name()),
                    kind.type_name()
                ),
                "not in a control",
            );
            return;
        }
        let inst = ir::ExternInst {
            name: i.name.name.clone(),
            kind,
            span: i.span,
        };
        let name = name_spec(&i.annotations, &i.name.name);
        self.push_extern(owner, &i.name, inst, name);
    }

    /// Adds `inst` to the extern instances of control `owner`, or (`None`)
    /// of the parser or function body being checked, with its P4Info name
    /// `name`, and declares it as `id`: an instance declared there or an
    /// extern parameter (`check::extern_params`). Its index there.
    pub(crate) fn push_extern(
        &mut self,
        owner: Option<Handle<ir::Control>>,
        id: &ast::Ident,
        inst: ir::ExternInst,
        name: NameSpec,
    ) -> Option<u32> {
        let idx = match owner {
            Some(h) => {
                let ctl = &mut self.prog.controls[h];
                let idx = ctl.externs.len() as u32;
                ctl.externs.push(inst);
                self.facts.extern_names.insert((h.index(), idx), name);
                idx
            }
            None => {
                let Some(body) = self.body.as_mut() else {
                    self.bug(id.span, "an extern instance outside a block");
                    return None;
                };
                let idx = body.externs.len() as u32;
                body.externs.push(crate::check::BodyExtern {
                    inst,
                    name,
                    global: None,
                });
                idx
            }
        };
        self.declare(id, Sym::Extern(idx));
        Some(idx)
    }
}
