//! The `main` instantiation: v1model's `V1Switch` package (P4_16 §7.2.12
//! packages, §11.3 instantiations; v1model.p4's `package V1Switch`).
//!
//! Contract: [`Checker::main_decl`] checks the six block arguments of
//! `V1Switch(...) main` against v1model's block types, parameter by
//! parameter (count, direction and type, H and M bound by the parser, as
//! p4c unifies a block with the package parameter's type), then the rules
//! BMv2 adds for the type arguments: H is a struct of headers, header
//! stacks and header unions (nested structs of these too), M a struct.
//! Other top-level instantiations are global extern instances.

use super::*;
use crate::v1model;

impl Checker {
    pub(super) fn main_decl(&mut self, i: &ast::Instantiation) {
        let ast::TypeKind::Named { name, .. } = &i.ty.kind else {
            self.unsupported(i.span, "this top-level instantiation");
            return;
        };
        match self.lookup(name).cloned() {
            Some(Sym::ExternDecl(ext)) => self.initializer_of_extern(i, &ext),
            _ => self.initializer_not_extern(i),
        }
        if name.ident.name != "V1Switch" {
            match self.lookup(name) {
                Some(Sym::ExternDecl(_)) => {
                    // A global extern instance: every control gets it under
                    // its top-level P4Info name, and P4Info building merges
                    // the copies into one object (one state).
                    self.global_externs.push(i.clone());
                    self.declare(&i.name, Sym::GlobalExtern);
                }
                // A struct, header or other type of values has no
                // constructor (p4c's functors3_e, `s() s1;` at the top
                // level), as in a control's locals.
                Some(Sym::Type(_) | Sym::Generic(_)) => self.error(
                    codes::WRONG_KIND,
                    name.span,
                    format!("`{}` cannot be instantiated", name.ident.name),
                ),
                _ => {
                    self.package_args(&name.ident.name, i);
                    self.error(
                        codes::BAD_MAIN,
                        name.span,
                        format!(
                            "only the v1model package `V1Switch` is supported, not `{}`",
                            name.ident.name
                        ),
                    )
                }
            }
            return;
        }
        if self.prog.main.is_some() {
            self.error_label(
                codes::DUPLICATE,
                i.span,
                "the program instantiates the package twice",
                "second instance",
            );
            return;
        }
        if i.name.name != "main" {
            self.warn(
                codes::IGNORED,
                i.name.span,
                "the package instance is usually called `main`",
            );
        }
        if i.args.len() != 6 {
            self.error_label(
                codes::ARG_COUNT,
                i.span,
                format!("V1Switch takes 6 arguments, {} given", i.args.len()),
                "wrong number of arguments",
            );
            return;
        }
        let Some(args) = self.v1switch_args_in_order(&i.args) else {
            return;
        };
        let mut parser = None;
        let mut controls = Vec::new();
        let mut names = Vec::new();
        for (k, a) in args.iter().copied().enumerate() {
            let ast::ExprKind::Call {
                callee,
                args,
                type_args,
            } = &a.value.kind
            else {
                self.error(
                    codes::BAD_MAIN,
                    a.span,
                    "expected a parser or control instantiation like `MyIngress()`",
                );
                return;
            };
            let ast::ExprKind::Name(p) = &callee.kind else {
                self.error(codes::BAD_MAIN, a.span, "expected a parser or control name");
                return;
            };
            names.push(p.ident.name.clone());
            let mut sym = self.lookup(p).cloned();
            let given: Option<Vec<Ty>> = type_args.iter().map(|t| self.ty(t)).collect();
            let Some(given) = given else { return };
            // What V1Switch's type parameters H and M are, once the parser
            // has fixed them: used to infer a generic block's type arguments.
            let (h_ty, m_ty) = match parser {
                Some(ph) => {
                    let ps = &self.prog.parsers[ph].params;
                    (
                        ps.get(1).and_then(|x| x.ty.clone()),
                        ps.get(2).and_then(|x| x.ty.clone()),
                    )
                }
                None => (None, None),
            };
            let expected: Vec<Option<Ty>> = match k {
                5 => vec![None, h_ty],
                _ => vec![h_ty, m_ty],
            };
            if let Some(Sym::CtorControl(n)) = &sym {
                let Some(decl) = self.ctor_controls.get(n).cloned() else {
                    return;
                };
                let params = ParamSpec::of(&decl.ctor_params);
                let what = format!("`{n}`");
                let Some(bound) = self.bind_args(&what, &params, args, a.span) else {
                    return;
                };
                let argv: Vec<&ast::Expr> = bound.iter().collect();
                let tys = if given.is_empty() {
                    infer_block_type_args(&decl.signature, &expected)
                } else {
                    given
                };
                match self.instantiate_ctor_control(&n.clone(), &tys, &argv, a.span) {
                    Some(h) => sym = Some(Sym::Control(h)),
                    None => return,
                }
                if !self.pending_instance_args.is_empty()
                    || !self.extern_params.pending_ctor.is_empty()
                {
                    self.pending_instance_args.clear();
                    self.extern_params.pending_ctor.clear();
                    self.unsupported(
                        a.span,
                        "passing control instances to controls instantiated in V1Switch",
                    );
                    return;
                }
            } else if let Some(Sym::CtorParser(n)) = &sym {
                let params = self
                    .ctor_parsers
                    .get(n)
                    .map(|d| ParamSpec::of(&d.ctor_params))
                    .unwrap_or_default();
                let what = format!("`{n}`");
                let Some(bound) = self.bind_args(&what, &params, args, a.span) else {
                    return;
                };
                let argv: Vec<&ast::Expr> = bound.iter().collect();
                match self.instantiate_ctor_parser(&n.clone(), &given, &argv, a.span) {
                    Some(h) => sym = Some(Sym::Parser(h)),
                    None => return,
                }
            } else if !given.is_empty() {
                self.error(
                    codes::ARG_COUNT,
                    a.span,
                    format!("`{}` takes no type arguments", p.ident.name),
                );
                return;
            } else if !args.is_empty() {
                self.error(
                    codes::ARG_COUNT,
                    a.span,
                    format!("`{}` takes no constructor arguments", p.ident.name),
                );
                return;
            }
            match (k, sym) {
                (0, Some(Sym::Parser(h))) => parser = Some(h),
                (1..=5, Some(Sym::Control(h))) => controls.push(h),
                (0, _) => {
                    self.error(
                        codes::BAD_MAIN,
                        a.span,
                        "the first V1Switch argument must be a parser",
                    );
                    return;
                }
                _ => {
                    self.error(
                        codes::BAD_MAIN,
                        a.span,
                        "V1Switch arguments 2 to 6 must be controls",
                    );
                    return;
                }
            }
        }
        let Some(parser) = parser else { return };
        // Each block against v1model's block type: H and M are what the
        // parser's parameters make them (p4c binds them the same way).
        let pparams = &self.prog.parsers[parser].params;
        let h = pparams.get(1).and_then(|x| x.ty.clone());
        let m = pparams.get(2).and_then(|x| x.ty.clone());
        // Extern apply parameters are not among the IR block's parameters
        // (`check::extern_params`), and no v1model block type has one.
        let ep = &self.extern_params;
        let extern_apply_param = |slots| {
            super::extern_params::apply_slots(slots)
                .into_iter()
                .next()
                .map(|s| s.name)
        };
        let blocks = std::iter::once((
            &self.prog.parsers[parser].name,
            pparams,
            extern_apply_param(ep.parsers.get(&parser.index())),
        ))
        .chain(controls.iter().map(|c| {
            (
                &self.prog.controls[*c].name,
                &self.prog.controls[*c].params,
                extern_apply_param(ep.controls.get(&c.index())),
            )
        }));
        let mismatch: Vec<(usize, String)> = blocks
            .enumerate()
            .filter_map(|(k, (name, params, extern_param))| {
                let why = match extern_param {
                    Some(p) => format!(
                        "its parameter `{p}` takes an extern instance, which v1model's {} does \
                         not",
                        v1model::V1SWITCH[k].name
                    ),
                    None => self.block_mismatch(&v1model::V1SWITCH[k], params, &h, &m)?,
                };
                let b = &v1model::V1SWITCH[k];
                let kind = if b.parser { "parser" } else { "control" };
                Some((
                    k,
                    format!("{kind} `{name}` does not match v1model's {}: {why}", b.name),
                ))
            })
            .collect();
        if !mismatch.is_empty() {
            for (k, msg) in mismatch {
                self.diags.push(
                    Diagnostic::error(codes::BAD_MAIN, msg)
                        .with_primary(args[k].span, "")
                        .with_note(format!(
                            "v1model.p4 declares `{}`",
                            v1model::V1SWITCH[k].declared
                        )),
                );
            }
            return;
        }
        if let (Some(h), Some(m)) = (&h, &m) {
            self.check_headers_and_meta(h, m, args[0].span);
        }
        self.prog.headers_ty = h;
        self.prog.meta_ty = m;
        self.prog.main = Some(ir::Main {
            parser,
            verify: controls[0],
            ingress: controls[1],
            egress: controls[2],
            compute: controls[3],
            deparser: controls[4],
            names: [
                names[0].clone(),
                names[1].clone(),
                names[2].clone(),
                names[3].clone(),
                names[4].clone(),
                names[5].clone(),
            ],
        });
        // Instances: the five controls, then their sub-instances.
        for c in controls {
            let path = self.prog.controls[c].name.clone();
            self.instantiate(c, path, &[]);
        }
    }

    /// Why a block's parameters do not fit `want`, v1model's block type
    /// with H and M bound to `h` and `m`; `None` if they fit.
    /// The arguments of an instance of a package other than V1Switch
    /// against the package's parameters (P4_16: the constructor call's types
    /// unify with the declaration's; p4c's module_e and its
    /// equate-type programs): a parser or control instantiation passed
    /// for a parser or control type must be of that kind, with as many
    /// parameters, the same directions and, where the type names no type
    /// parameter, the same types. A parameter of another type takes no
    /// parser or control.
    fn package_args(&mut self, package: &str, i: &ast::Instantiation) {
        let Some(pkg) = self.block_sigs.get(package).cloned() else {
            return;
        };
        for (a, p) in i.args.iter().zip(&pkg.params) {
            let ast::ExprKind::Call { callee, .. } = &a.value.kind else {
                continue;
            };
            let ast::ExprKind::Name(n) = &callee.kind else {
                continue;
            };
            let arg_name = &n.ident.name;
            let arg_is_parser = self.parser_type_names.contains(arg_name);
            if !arg_is_parser && !self.control_type_names.contains(arg_name) {
                continue;
            }
            let Some(arg) = self.block_sigs.get(arg_name).cloned() else {
                continue;
            };
            let kind = |parser: bool| if parser { "parser" } else { "control" };
            let param_ty = match &p.ty.kind {
                ast::TypeKind::Named { name, .. } => self.block_sigs.get(&name.ident.name).cloned(),
                _ => None,
            };
            let param_is_parser = param_ty
                .as_ref()
                .map(|t| self.parser_type_names.contains(&t.name.name));
            let problem = match (&param_ty, param_is_parser) {
                (Some(want), Some(wp)) if wp == arg_is_parser => {
                    self.block_sig_mismatch(&arg, want, &pkg.type_params)
                }
                (Some(_), Some(wp)) => Some(format!(
                    "a {} is passed where a {} is expected",
                    kind(arg_is_parser),
                    kind(wp)
                )),
                _ => Some(format!(
                    "a {} is passed for a parameter that is not a parser or control type",
                    kind(arg_is_parser)
                )),
            };
            if let Some(problem) = problem {
                self.error_label(
                    codes::TYPE_MISMATCH,
                    a.span,
                    format!(
                        "the type of argument `{arg_name}` does not match parameter `{}` of \
                         package `{package}`: {problem}",
                        p.name.name
                    ),
                    "argument",
                );
            }
        }
    }

    /// Why block `arg` does not fit block type `want` (count, direction or
    /// type of a parameter), or `None`. Types that name a type parameter
    /// of either (or of the package, `outer`) are not compared.
    fn block_sig_mismatch(
        &mut self,
        arg: &ast::TypeDeclSignature,
        want: &ast::TypeDeclSignature,
        outer: &[ast::Ident],
    ) -> Option<String> {
        if arg.params.len() != want.params.len() {
            return Some(format!(
                "`{}` has {} parameter(s), `{}` {}",
                arg.name.name,
                arg.params.len(),
                want.name.name,
                want.params.len()
            ));
        }
        let generic: Vec<&str> = (arg.type_params.iter())
            .chain(&want.type_params)
            .chain(outer)
            .map(|t| t.name.as_str())
            .collect();
        for (x, y) in arg.params.iter().zip(&want.params) {
            if x.direction != y.direction {
                return Some(format!(
                    "parameter `{}` is {} but `{}` is {}",
                    x.name.name,
                    direction_name(x.direction),
                    y.name.name,
                    direction_name(y.direction)
                ));
            }
            if names_any(&x.ty, &generic) || names_any(&y.ty, &generic) {
                continue;
            }
            // The packet is an extern object, not a type of values (it has
            // no `Ty`): such parameters match when they name the same one.
            match (packet_name(&x.ty), packet_name(&y.ty)) {
                (None, None) => {}
                (px, py) if px == py => continue,
                (px, py) => {
                    return Some(format!(
                        "parameter `{}` is {} but `{}` is {}",
                        x.name.name,
                        px.unwrap_or("not a packet"),
                        y.name.name,
                        py.unwrap_or("not a packet")
                    ));
                }
            }
            if let (Some(tx), Some(ty)) = (self.ty(&x.ty), self.ty(&y.ty))
                && tx != ty
            {
                return Some(format!(
                    "parameter `{}` is {} but `{}` is {}",
                    x.name.name,
                    self.ty_name(&tx),
                    y.name.name,
                    self.ty_name(&ty)
                ));
            }
        }
        None
    }

    fn block_mismatch(
        &self,
        want: &v1model::Block,
        params: &[ir::BlockParam],
        h: &Option<Ty>,
        m: &Option<Ty>,
    ) -> Option<String> {
        use v1model::BlockParam as P;
        if params.len() != want.params.len() {
            return Some(format!(
                "it has {} parameter(s), v1model's has {}",
                params.len(),
                want.params.len()
            ));
        }
        for (got, want) in params.iter().zip(want.params) {
            let (dir, ty, what) = match want {
                P::Packet => {
                    if got.ty.is_some() {
                        return Some(format!("`{}` must be the packet", got.name));
                    }
                    continue;
                }
                P::Headers(d) => (*d, h.clone(), "H"),
                P::Meta(d) => (*d, m.clone(), "M"),
                P::StandardMetadata(d) => (*d, None, "standard_metadata_t"),
            };
            let Some(got_ty) = &got.ty else {
                return Some(format!(
                    "`{}` is a packet where v1model has {what}",
                    got.name
                ));
            };
            let fits = match (want, &ty) {
                (P::StandardMetadata(_), _) => matches!(got_ty,
                    Ty::Composite(c) if self.prog.composites[*c].name == "standard_metadata_t"),
                (_, Some(t)) => t == got_ty,
                (_, None) => true,
            };
            if !fits {
                let bound = ty.map(|t| format!(" ({}, from the parser)", self.ty_name(&t)));
                return Some(format!(
                    "`{}` is {} where v1model has {what}{}",
                    got.name,
                    self.ty_name(got_ty),
                    bound.unwrap_or_default()
                ));
            }
            let got_dir = match got.dir {
                ir::Direction::In => v1model::Dir::In,
                ir::Direction::Out => v1model::Dir::Out,
                ir::Direction::InOut => v1model::Dir::InOut,
            };
            if got_dir != dir {
                let word = |d: v1model::Dir| match d {
                    v1model::Dir::In => "in",
                    v1model::Dir::Out => "out",
                    v1model::Dir::InOut => "inout",
                };
                return Some(format!(
                    "`{}` is `{}`, v1model's parameter there is `{}`",
                    got.name,
                    word(got_dir),
                    word(dir)
                ));
            }
        }
        None
    }

    /// BMv2's rules for `V1Switch`'s type arguments: H is a struct whose
    /// fields are headers, header stacks, header unions or structs of these;
    /// M is a struct (p4c: "the type should be a struct of headers, stacks,
    /// or unions", "expected type to be a struct").
    fn check_headers_and_meta(&mut self, h: &Ty, m: &Ty, span: Span) {
        let comps = &self.prog.composites;
        let is_struct =
            |t: &Ty| matches!(t, Ty::Composite(c) if comps[*c].kind == ir::CompositeKind::Struct);
        let (h_struct, m_struct) = (is_struct(h), is_struct(m));
        if !h_struct {
            self.error(
                codes::BAD_MAIN,
                span,
                format!(
                    "v1model's H, here {} (the parser's headers), must be a struct of headers, header \
                     stacks and header unions",
                    self.ty_name(h)
                ),
            );
        } else if let Some(bad) = self.non_header_field(h) {
            self.error(
                codes::BAD_MAIN,
                span,
                format!(
                    "v1model's H, here {} (the parser's headers), must be a struct of headers, header \
                     stacks and header unions: {bad}",
                    self.ty_name(h)
                ),
            );
        }
        if !m_struct {
            self.error(
                codes::BAD_MAIN,
                span,
                format!(
                    "v1model's M, here {} (the parser's metadata), must be a struct",
                    self.ty_name(m)
                ),
            );
        }
    }

    /// The first field of struct `t` (nested structs included) that is not
    /// a header, header stack or header union, as "field `f` is T".
    fn non_header_field(&self, t: &Ty) -> Option<String> {
        let Ty::Composite(c) = t else { return None };
        for f in &self.prog.composites[*c].fields {
            match &f.ty {
                Ty::Stack(..) => {}
                Ty::Composite(k) if self.prog.composites[*k].kind != ir::CompositeKind::Struct => {}
                Ty::Composite(_) => {
                    if let Some(bad) = self.non_header_field(&f.ty) {
                        return Some(bad);
                    }
                }
                other => return Some(format!("field `{}` is {}", f.name, self.ty_name(other))),
            }
        }
        None
    }
}

/// The type arguments of generic block `sig` instantiated in `V1Switch`
/// without any: each parameter whose type is a bare type parameter takes
/// the type `V1Switch` gives that position (`expected`, H or M), as p4c
/// infers them from the package's type parameters. Stops at the first
/// parameter it cannot infer; the caller reports the count mismatch.
fn infer_block_type_args(sig: &ast::TypeDeclSignature, expected: &[Option<Ty>]) -> Vec<Ty> {
    let mut out: Vec<Option<Ty>> = vec![None; sig.type_params.len()];
    for (p, want) in sig.params.iter().zip(expected) {
        let ast::TypeKind::Named { name, args } = &p.ty.kind else {
            continue;
        };
        if !args.is_empty() || name.top_level {
            continue;
        }
        if let Some(k) = sig
            .type_params
            .iter()
            .position(|t| t.name == name.ident.name)
            && out[k].is_none()
        {
            out[k] = want.clone();
        }
    }
    out.into_iter().map_while(|t| t).collect()
}

/// How a direction reads in a diagnostic.
fn direction_name(d: ast::Direction) -> &'static str {
    match d {
        ast::Direction::None => "directionless",
        ast::Direction::In => "`in`",
        ast::Direction::Out => "`out`",
        ast::Direction::InOut => "`inout`",
    }
}

/// Whether type `t` names one of `names` anywhere (a type parameter).
/// `packet_in` or `packet_out` when `t` names one.
fn packet_name(t: &ast::Type) -> Option<&str> {
    match &t.kind {
        ast::TypeKind::Named { name, .. }
            if name.ident.name == "packet_in" || name.ident.name == "packet_out" =>
        {
            Some(name.ident.name.as_str())
        }
        _ => None,
    }
}

fn names_any(t: &ast::Type, names: &[&str]) -> bool {
    match &t.kind {
        ast::TypeKind::Named { name, args } => {
            names.contains(&name.ident.name.as_str()) || args.iter().any(|a| names_any(a, names))
        }
        ast::TypeKind::Stack { elem, .. } => names_any(elem, names),
        ast::TypeKind::Tuple(items) => items.iter().any(|i| names_any(i, names)),
        ast::TypeKind::List(elem) => names_any(elem, names),
        _ => false,
    }
}

/// V1Switch's parameter names in v1model.p4, in order.
const V1SWITCH_PARAMS: [&str; 6] = ["p", "vr", "ig", "eg", "ck", "dep"];

impl Checker {
    /// The six arguments of `V1Switch(...)` in parameter order: named
    /// arguments (`V1Switch(p = P(), ig = I(), vr = VC(), ...)`, P4_16
    /// §6.8.2) are put where their parameter is. Either all arguments are
    /// named or none, and each name is one of V1Switch's parameters, given
    /// once; otherwise an error and `None`.
    fn v1switch_args_in_order<'a>(
        &mut self,
        args: &'a [ast::Argument],
    ) -> Option<Vec<&'a ast::Argument>> {
        if args.iter().all(|a| a.name.is_none()) {
            return Some(args.iter().collect());
        }
        let mut slots: [Option<&'a ast::Argument>; 6] = [None; 6];
        let mut ok = true;
        for a in args {
            let Some(n) = &a.name else {
                self.error(
                    codes::BAD_MAIN,
                    a.span,
                    "either every argument of V1Switch is named or none is",
                );
                ok = false;
                continue;
            };
            match V1SWITCH_PARAMS.iter().position(|p| *p == n.name) {
                Some(k) if slots[k].is_none() => slots[k] = Some(a),
                Some(_) => {
                    self.error(
                        codes::DUPLICATE,
                        n.span,
                        format!("V1Switch's parameter `{}` is given twice", n.name),
                    );
                    ok = false;
                }
                None => {
                    self.error(
                        codes::BAD_MAIN,
                        n.span,
                        format!(
                            "V1Switch has no parameter `{}` (its parameters are p, vr, ig, eg, ck and dep)",
                            n.name
                        ),
                    );
                    ok = false;
                }
            }
        }
        if !ok {
            return None;
        }
        slots.into_iter().collect()
    }
}
