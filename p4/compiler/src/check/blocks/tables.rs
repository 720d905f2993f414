//! Tables: keys, actions, properties and their order, direct counters and
//! meters, and where `apply` may be called (P4_16 spec §14).

use super::entries::PriorityOrder;
use super::{expr_text, key_is_nameable, name_spec};
use crate::check::program_info::TableFacts;
use crate::check::{Checker, Sym, codes};
use crate::diag::{Diagnostic, Span};
use crate::front::ast;
use crate::ir::{self, Handle, Ty};
use p4_target::info::{ActionScope, MatchKind};

/// A table's `actions` list as checked, in list order.
#[derive(Default)]
pub(super) struct ActionList {
    pub(super) actions: Vec<Handle<ir::Action>>,
    /// The arguments the list binds to each action's directional parameters.
    pub(super) bound: Vec<Vec<ir::Expr>>,
    /// `@defaultonly`, `@tableonly` or neither.
    pub(super) scopes: Vec<ActionScope>,
}

impl Checker {
    // ---------------------------------------------------------------- table
    pub(super) fn table_decl(&mut self, t: &ast::TableDecl, ctl: Handle<ir::Control>) {
        let mut keys = Vec::new();
        let mut list = ActionList::default();
        let mut facts = TableFacts {
            name: name_spec(&t.annotations, &t.name.name),
            size: 1024,
            ..Default::default()
        };
        let mut default_prop = None;
        let mut entries_prop = None;
        let mut order = PriorityOrder {
            largest_wins: true,
            delta: 1,
        };
        let mut implementation = None;
        for (i, p) in t.properties.iter().enumerate() {
            let twice = !matches!(p.kind, ast::TablePropertyKind::Custom { .. })
                && t.properties[..i]
                    .iter()
                    .any(|o| std::mem::discriminant(&o.kind) == std::mem::discriminant(&p.kind));
            if twice {
                self.error_label(
                    codes::BAD_TABLE_PROPERTY,
                    p.span,
                    "this table property is given twice",
                    "second time",
                );
                continue;
            }
            match &p.kind {
                ast::TablePropertyKind::Key(ks) => self.table_keys(ks, p.span, &mut keys),
                ast::TablePropertyKind::Actions(refs) => {
                    self.table_action_list(refs, ctl, &mut list)
                }
                ast::TablePropertyKind::DefaultAction(e) => {
                    default_prop = Some((e, p.is_const));
                }
                ast::TablePropertyKind::Size(e) => {
                    if let Some(s) = self.const_u32(e, "table size") {
                        facts.size = s;
                    }
                }
                ast::TablePropertyKind::Entries(es) => entries_prop = Some((es, p.is_const)),
                ast::TablePropertyKind::Implementation(e)
                | ast::TablePropertyKind::Counters(e)
                | ast::TablePropertyKind::Meters(e) => {
                    self.table_extern_property(t, p, e, ctl, &mut implementation, &mut facts)
                }
                ast::TablePropertyKind::SupportTimeout(e) => {
                    if let Some(x) = self.expr(e, Some(&Ty::Bool)) {
                        facts.idle_timeout = matches!(x.kind, ir::ExprKind::Bool(true));
                    }
                }
                ast::TablePropertyKind::Custom { name, value }
                    if name.name == "largest_priority_wins" =>
                {
                    if let Some(x) = self.expr(value, Some(&Ty::Bool)) {
                        match x.kind {
                            ir::ExprKind::Bool(b) => order.largest_wins = b,
                            _ => self.error(
                                codes::NOT_CONSTANT,
                                value.span,
                                "`largest_priority_wins` must be a constant boolean",
                            ),
                        }
                    }
                }
                ast::TablePropertyKind::Custom { name, value } if name.name == "priority_delta" => {
                    // A number: `true` is no delta (p4c's
                    // table-custom-property-priority_delta-unsupported-type).
                    match self.const_number(value, "`priority_delta`") {
                        Some(d) if d > 0 && d <= i32::MAX as i128 => order.delta = d as i64,
                        Some(_) => self.error(
                            codes::BAD_TABLE_PROPERTY,
                            value.span,
                            "`priority_delta` must be a positive integer",
                        ),
                        None => {}
                    }
                }
                ast::TablePropertyKind::Custom { name, .. } => {
                    self.warn(
                        codes::IGNORED,
                        name.span,
                        format!("table property `{}` is ignored", name.name),
                    );
                }
            }
        }
        self.table_property_order(t);
        self.table_selector_keys(t, ctl, implementation, &mut keys);
        if !self.table_default_action(default_prop, &mut list, &mut facts) {
            return;
        }
        if let Some((es, is_const)) = entries_prop {
            facts.is_const = is_const;
            self.table_entries(t, es, &keys, &list, &mut facts, order);
        }
        facts.scopes = list.scopes;
        self.check_direct_resources(t, ctl, &facts, &list.actions);
        let th = self.prog.tables.append(
            ir::Table {
                name: t.name.name.clone(),
                control: ctl,
                keys,
                actions: list.actions,
                bound: list.bound,
                implementation,
                direct_meter: facts.direct_meter,
                span: t.span,
            },
            t.span,
        );
        self.facts.tables.insert(th.index(), facts);
        self.prog.controls[ctl].tables.push(th);
        self.declare(&t.name, Sym::Table(th));
    }

    /// A `key` property's elements, appended to `keys`: their types, match
    /// kinds and control-plane names; at most one lpm key (at `span`).
    fn table_keys(&mut self, ks: &[ast::KeyElement], span: Span, keys: &mut Vec<ir::Key>) {
        for k in ks {
            let Some(x) = self.expr(&k.expr, None) else {
                continue;
            };
            if !matches!(
                x.ty,
                Ty::Bit(_) | Ty::Int(_) | Ty::Bool | Ty::SerEnum(_) | Ty::Error | Ty::Enum(_)
            ) {
                self.error(
                    codes::TYPE_MISMATCH,
                    k.expr.span,
                    format!("a key cannot be {}", self.ty_name(&x.ty)),
                );
                continue;
            }
            let mk = k.match_kind.name.as_str();
            if !self.match_kinds.iter().any(|m| m == mk) {
                self.error_label(
                    codes::BAD_MATCH_KIND,
                    k.match_kind.span,
                    format!("unknown match kind `{mk}`"),
                    "expected exact, ternary, lpm, range, optional or selector",
                );
                continue;
            }
            let kind = match mk {
                "exact" => ir::KeyKind::Match(MatchKind::Exact),
                "lpm" => ir::KeyKind::Match(MatchKind::Lpm),
                "ternary" => ir::KeyKind::Match(MatchKind::Ternary),
                "range" => ir::KeyKind::Match(MatchKind::Range),
                "optional" => ir::KeyKind::Match(MatchKind::Optional),
                "selector" => ir::KeyKind::Selector,
                other => {
                    self.error(
                        codes::BAD_MATCH_KIND,
                        k.match_kind.span,
                        format!("match kind `{other}` is not supported by v1model"),
                    );
                    continue;
                }
            };
            let name =
                match ast::find_annotation(&k.annotations, "name").and_then(|a| a.string_arg()) {
                    Some(n) => n.to_string(),
                    None => {
                        // P4_16 §14.2.1.1 leaves key names to the
                        // compiler; p4c names only simple keys.
                        if !key_is_nameable(&k.expr) {
                            self.error_label(
                            codes::BAD_TABLE_PROPERTY,
                            k.expr.span,
                            "this key expression needs a @name annotation",
                            "p4c names only fields, slices, stack elements, masks and isValid()",
                        );
                        }
                        expr_text(&k.expr)
                    }
                };
            keys.push(ir::Key {
                expr: x,
                kind,
                name,
            });
        }
        let lpm = keys
            .iter()
            .filter(|k| k.kind == ir::KeyKind::Match(MatchKind::Lpm))
            .count();
        if lpm > 1 {
            self.error(
                codes::BAD_MATCH_KIND,
                span,
                "a table may have at most one lpm key",
            );
        }
    }

    /// An `actions` property: each action with the arguments the list binds
    /// to its directional parameters and its `@defaultonly`/`@tableonly`
    /// scope, appended to `list`.
    fn table_action_list(
        &mut self,
        refs: &[ast::ActionRef],
        ctl: Handle<ir::Control>,
        list: &mut ActionList,
    ) {
        for r in refs {
            match self.lookup(&r.name).cloned() {
                Some(Sym::Action(a)) => {
                    self.check_action_use(a, Some(ctl), r.span);
                    // Arguments bound in the list go to the
                    // directional parameters.
                    let act = self.prog.actions[a].clone();
                    let given: Vec<&ast::Expr> =
                        r.args.iter().flatten().map(|x| &x.value).collect();
                    if given.len() != act.n_directional as usize {
                        self.error_label(
                            codes::ARG_COUNT,
                            r.span,
                            format!(
                                "action `{}` has {} directional parameter(s); the actions list must bind exactly those",
                                act.name, act.n_directional
                            ),
                            "wrong number of bound arguments",
                        );
                        continue;
                    }
                    // p4c: "table invocation in action
                    // argument" (issue2835): a bound argument
                    // is evaluated when the table runs the
                    // action, and may not run a table itself.
                    let mut ok = true;
                    for e in &given {
                        if let Some(sp) = self.table_apply_in(e) {
                            self.error_label(
                                codes::NOT_ALLOWED_HERE,
                                sp,
                                "a table may not be applied in an argument of the actions list",
                                "table invocation in an action argument",
                            );
                            ok = false;
                        }
                    }
                    if !ok {
                        continue;
                    }
                    let mut bound_args = Vec::new();
                    for (prm, e) in act.vars.iter().zip(&given) {
                        let x = if prm.param == Some(ir::Direction::In) {
                            self.expr(e, Some(&prm.ty))
                        } else {
                            self.lvalue(e).and_then(|l| {
                                self.coerce(crate::check::expr::TE::Typed(l), &prm.ty, e.span)
                            })
                        };
                        match x {
                            Some(x) => bound_args.push(x),
                            None => ok = false,
                        }
                    }
                    if !ok {
                        continue;
                    }
                    if list.actions.contains(&a) {
                        self.error(codes::DUPLICATE, r.span, "this action is listed twice");
                        continue;
                    }
                    let scope = if ast::find_annotation(&r.annotations, "defaultonly").is_some() {
                        ActionScope::DefaultOnly
                    } else if ast::find_annotation(&r.annotations, "tableonly").is_some() {
                        ActionScope::TableOnly
                    } else {
                        ActionScope::TableAndDefault
                    };
                    list.actions.push(a);
                    list.bound.push(bound_args);
                    list.scopes.push(scope);
                }
                Some(_) => self.error(
                    codes::BAD_ACTION_REF,
                    r.name.span,
                    format!("`{}` is not an action", r.name.ident.name),
                ),
                None => self.error_label(
                    codes::UNKNOWN_NAME,
                    r.name.span,
                    format!("cannot find action `{}`", r.name.ident.name),
                    "not declared",
                ),
            }
        }
    }

    /// `implementation`, `counters` or `meters` (property `p`, value `e`):
    /// an extern instance of this control, or an anonymous one
    /// instantiated in place and named after the table, of the kind the
    /// property needs.
    fn table_extern_property(
        &mut self,
        t: &ast::TableDecl,
        p: &ast::TableProperty,
        e: &ast::Expr,
        ctl: Handle<ir::Control>,
        implementation: &mut Option<u32>,
        facts: &mut TableFacts,
    ) {
        let which = match &p.kind {
            ast::TablePropertyKind::Implementation(_) => 0,
            ast::TablePropertyKind::Counters(_) => 1,
            _ => 2,
        };
        let idx = match &e.kind {
            ast::ExprKind::Name(pn) => match self.lookup(pn).cloned() {
                Some(Sym::Extern(i)) => Some(i),
                _ => None,
            },
            // `implementation = action_selector(...)`: an
            // anonymous instance named after the table, as p4c does.
            ast::ExprKind::Call {
                callee,
                type_args,
                args,
            } => {
                let before = self.prog.controls[ctl].externs.len();
                let inst = ast::Instantiation {
                    annotations: t.annotations.clone(),
                    ty: ast::Type {
                        kind: ast::TypeKind::Named {
                            name: match &callee.kind {
                                ast::ExprKind::Name(p) => p.clone(),
                                _ => {
                                    self.error(
                                        codes::BAD_TABLE_PROPERTY,
                                        e.span,
                                        "expected an extern instantiation",
                                    );
                                    return;
                                }
                            },
                            args: type_args.clone(),
                        },
                        span: callee.span,
                    },
                    args: args.clone(),
                    name: t.name.clone(),
                    initializer: None,
                    span: e.span,
                };
                self.control_instantiation_anon(&inst, ctl);
                (self.prog.controls[ctl].externs.len() > before).then_some(before as u32)
            }
            _ => None,
        };
        let Some(idx) = idx else {
            self.error(
                codes::BAD_TABLE_PROPERTY,
                e.span,
                "expected the name of an extern instance declared in this control",
            );
            return;
        };
        let kind = self.prog.controls[ctl].externs[idx as usize].kind.clone();
        match (which, kind) {
            (0, ir::ExternKind::ActionProfile(_) | ir::ExternKind::ActionSelector(..)) => {
                *implementation = Some(idx)
            }
            (1, ir::ExternKind::DirectCounter(_)) => facts.direct_counter = Some(idx),
            (2, ir::ExternKind::DirectMeter(_)) => facts.direct_meter = Some(idx),
            _ => self.error(
                codes::BAD_TABLE_PROPERTY,
                e.span,
                match which {
                    0 => "`implementation` needs an action_profile or action_selector",
                    1 => "`counters` needs a direct_counter",
                    _ => "`meters` needs a direct_meter",
                },
            ),
        }
    }

    /// `selector` keys need an action selector as the table's
    /// `implementation`; without one they are dropped with a warning.
    fn table_selector_keys(
        &mut self,
        t: &ast::TableDecl,
        ctl: Handle<ir::Control>,
        implementation: Option<u32>,
        keys: &mut Vec<ir::Key>,
    ) {
        let has_selector = keys.iter().any(|k| k.kind == ir::KeyKind::Selector);
        if has_selector {
            let is_sel = implementation.map(|i| {
                matches!(
                    self.prog.controls[ctl].externs[i as usize].kind,
                    ir::ExternKind::ActionSelector(..)
                )
            });
            match is_sel {
                Some(true) => {}
                // p4c accepts a table with `selector` keys and no
                // implementation (its issue1560 sample) and leaves the keys
                // out: the table matches on the others alone.
                None => {
                    self.warn(
                        codes::IGNORED,
                        t.span,
                        "`selector` keys without `implementation = <an action_selector>` are ignored",
                    );
                    keys.retain(|k| k.kind != ir::KeyKind::Selector);
                }
                Some(false) => self.error(
                    codes::BAD_MATCH_KIND,
                    t.span,
                    "`selector` keys need `implementation = <an action_selector>`, not an action_profile",
                ),
            }
        }
    }

    /// The `default_action` property (or `NoAction`, added as
    /// `@defaultonly` when not listed, as p4c does), recorded in `facts`.
    /// `false` when it is no action call: the table is then not declared.
    fn table_default_action(
        &mut self,
        default_prop: Option<(&ast::Expr, bool)>,
        list: &mut ActionList,
        facts: &mut TableFacts,
    ) -> bool {
        match default_prop {
            Some((e, is_const)) => {
                let (name, args) = match &e.kind {
                    ast::ExprKind::Name(p) => (Some(p), Vec::new()),
                    ast::ExprKind::Call { callee, args, .. } => match &callee.kind {
                        ast::ExprKind::Name(p) => (Some(p), args.clone()),
                        _ => (None, Vec::new()),
                    },
                    _ => (None, Vec::new()),
                };
                let Some(name) = name else {
                    self.error(codes::BAD_DEFAULT_ACTION, e.span, "expected an action call");
                    return false;
                };
                match self.lookup(name).cloned() {
                    Some(Sym::Action(a)) => {
                        match list.actions.iter().position(|x| *x == a) {
                            Some(i) if list.scopes[i] == ActionScope::TableOnly => self.error(
                                codes::BAD_DEFAULT_ACTION,
                                e.span,
                                format!(
                                    "`{}` is @tableonly and cannot be the default action",
                                    name.ident.name
                                ),
                            ),
                            Some(i) => {
                                self.check_bound_args(a, &args, &list.bound[i], "default action")
                            }
                            None => self.error_label(
                                codes::BAD_DEFAULT_ACTION,
                                e.span,
                                format!(
                                    "default action `{}` is not in the table's actions",
                                    name.ident.name
                                ),
                                "not listed in `actions`",
                            ),
                        }
                        if let Some(params) = self.const_action_args(a, &args, e.span) {
                            facts.default = Some((a, params));
                            facts.default_is_const = is_const;
                        }
                    }
                    _ => self.error_label(
                        codes::BAD_DEFAULT_ACTION,
                        name.span,
                        format!("`{}` is not an action", name.ident.name),
                        "not an action",
                    ),
                }
            }
            None => {
                // p4c: the default is NoAction, added as @defaultonly if not listed.
                if let Some(Sym::Action(na)) = self.scopes[0].get("NoAction").cloned() {
                    if !list.actions.contains(&na) {
                        list.actions.push(na);
                        list.bound.push(Vec::new());
                        list.scopes.push(ActionScope::DefaultOnly);
                    }
                    facts.default = Some((na, Vec::new()));
                }
            }
        }
        true
    }

    /// The rules for a table's direct counter and meter (v1model.p4: a
    /// direct resource is owned by the one table that names it; BMv2, as
    /// p4c enforces: a table with a direct meter needs an action that reads
    /// it, as the read is what says where the colour goes).
    fn check_direct_resources(
        &mut self,
        t: &ast::TableDecl,
        ctl: Handle<ir::Control>,
        facts: &TableFacts,
        actions: &[Handle<ir::Action>],
    ) {
        let mine = [
            ("direct_counter", facts.direct_counter),
            ("direct_meter", facts.direct_meter),
        ];
        for (kind, idx) in mine {
            let Some(idx) = idx else { continue };
            let other = self.prog.controls[ctl].tables.iter().find(|o| {
                let f = self.facts.tables.get(&o.index());
                f.is_some_and(|f| match kind {
                    "direct_counter" => f.direct_counter == Some(idx),
                    _ => f.direct_meter == Some(idx),
                })
            });
            if let Some(o) = other {
                let o = &self.prog.tables[*o];
                let name = &self.prog.controls[ctl].externs[idx as usize].name;
                self.diags.push(
                    Diagnostic::error(
                        codes::BAD_TABLE_PROPERTY,
                        format!(
                            "{kind} `{name}` is attached to tables `{}` and `{}`: a direct \
                             resource belongs to one table",
                            o.name, t.name.name
                        ),
                    )
                    .with_primary(t.name.span, "second table")
                    .with_secondary(o.span, "first table"),
                );
            }
        }
        if let Some(m) = facts.direct_meter {
            let read = actions.iter().any(|a| {
                self.facts
                    .meter_reads
                    .get(&a.index())
                    .is_some_and(|r| r.iter().any(|(i, _)| *i == m))
            });
            if !read {
                let name = &self.prog.controls[ctl].externs[m as usize].name;
                self.error_label(
                    codes::BAD_TABLE_PROPERTY,
                    t.name.span,
                    format!(
                        "table `{}` has direct meter `{name}` but none of its actions calls \
                         `{name}.read(...)`: BMv2 needs the read to know where the colour goes",
                        t.name.name
                    ),
                    "no action reads the meter",
                );
            }
        }
    }

    /// An action of a table of control `h` may count only that table's
    /// direct counter and read only its direct meter: the cell used is that
    /// of the entry the table hit, which another table's counter or meter
    /// does not have (p4c's DPDK back end: "can only be invoked from within
    /// action of ownertable"; BMv2 drops such a `count()` and colours only
    /// when the owner table is applied). Run once every table is known, so
    /// a meter no table owns is left to `check_meter_reads_owned`.
    pub(super) fn check_direct_uses_owned(&mut self, h: Handle<ir::Control>) {
        let ctl = &self.prog.controls[h];
        let owned_meters: Vec<u32> = ctl
            .tables
            .iter()
            .filter_map(|t| self.prog.tables[*t].direct_meter)
            .collect();
        let mut bad = Vec::new();
        for th in &ctl.tables {
            let table = &self.prog.tables[*th];
            let Some(facts) = self.facts.tables.get(&th.index()) else {
                continue;
            };
            for a in &table.actions {
                let uses = [
                    (
                        "direct_counter",
                        "count",
                        "counters",
                        facts.direct_counter,
                        &self.facts.counter_counts,
                    ),
                    (
                        "direct_meter",
                        "read",
                        "meters",
                        facts.direct_meter,
                        &self.facts.meter_reads,
                    ),
                ];
                for (kind, method, prop, own, map) in uses {
                    for (inst, span) in map.get(&a.index()).into_iter().flatten() {
                        let unowned_meter = kind == "direct_meter" && !owned_meters.contains(inst);
                        if own != Some(*inst) && !unowned_meter {
                            bad.push((kind, method, prop, *inst, *span, *a, *th));
                        }
                    }
                }
            }
        }
        // An action called by two listed actions is reported once a table.
        bad.sort_by_key(|b| (b.4.start, b.4.end, b.6.index(), b.3));
        bad.dedup_by_key(|b| (b.4.start, b.4.end, b.6.index(), b.3));
        for (kind, method, prop, inst, span, a, th) in bad {
            let name = &self.prog.controls[h].externs[inst as usize].name;
            let action = &self.prog.actions[a].name;
            let table = &self.prog.tables[th];
            let d = Diagnostic::error(
                codes::NOT_ALLOWED_HERE,
                format!(
                    "{kind} `{name}`'s {method}() is called from action `{action}` of table \
                     `{}`, which does not have `{prop} = {name}`: it can only be called from an \
                     action of its owner table",
                    table.name
                ),
            )
            .with_primary(span, "not the owner table's resource")
            .with_secondary(table.span, "table applying the action");
            self.diags.push(d);
        }
    }

    /// Every `direct_meter.read` in control `h`'s actions reads a meter some
    /// table of `h` owns (`meters = m`): the colour is that of the entry the
    /// table hit, so a meter no table owns has none to give.
    pub(super) fn check_meter_reads_owned(&mut self, h: Handle<ir::Control>) {
        let ctl = &self.prog.controls[h];
        let owned: Vec<u32> = ctl
            .tables
            .iter()
            .filter_map(|t| self.prog.tables[*t].direct_meter)
            .collect();
        let mut unowned: Vec<(u32, Span)> = ctl
            .actions
            .iter()
            .filter_map(|a| self.facts.meter_reads.get(&a.index()))
            .flatten()
            .filter(|(m, _)| !owned.contains(m))
            .copied()
            .collect();
        unowned.sort_by_key(|(_, s)| (s.start, s.end));
        unowned.dedup();
        for (m, span) in unowned {
            let name = self.prog.controls[h].externs[m as usize].name.clone();
            self.error_label(
                codes::NOT_ALLOWED_HERE,
                span,
                format!(
                    "direct meter `{name}` is read here, but no table has `meters = {name}`: \
                     the colour read is that of the entry its table hit"
                ),
                "meter of no table",
            );
        }
    }

    /// p4c reads a table's properties in order and needs `actions`
    /// (missing_actions: "does not have an `actions' property"; issue2033:
    /// "has no action list, so it cannot invoke"; table-entries-decl-order):
    /// `default_action` and `entries` name actions of a list declared
    /// before them, and `entries` match a `key` declared before them.
    fn table_property_order(&mut self, t: &ast::TableDecl) {
        use ast::TablePropertyKind as K;
        let at = |f: fn(&K) -> bool| t.properties.iter().position(|p| f(&p.kind));
        let actions = at(|k| matches!(k, K::Actions(_)));
        let key = at(|k| matches!(k, K::Key(_)));
        if actions.is_none() {
            self.error_label(
                codes::BAD_TABLE_PROPERTY,
                t.name.span,
                format!("table `{}` has no `actions` property", t.name.name),
                "every table lists its actions",
            );
        }
        for (i, p) in t.properties.iter().enumerate() {
            let (what, needs) = match p.kind {
                K::DefaultAction(_) => ("`default_action`", [actions, None]),
                K::Entries(_) => ("`entries`", [actions, key]),
                _ => continue,
            };
            let names = ["`actions`", "`key`"];
            for (before, name) in needs.iter().zip(names) {
                if before.is_some_and(|b| b > i) {
                    self.error_label(
                        codes::BAD_TABLE_PROPERTY,
                        p.span,
                        format!("{what} must come after {name} in the table (p4c reads properties in order)"),
                        format!("before {name}"),
                    );
                }
            }
        }
    }

    /// The span of a `t.apply()` of a table somewhere inside `e`, if any.
    fn table_apply_in(&self, e: &ast::Expr) -> Option<Span> {
        use ast::ExprKind as K;
        match &e.kind {
            K::Call { callee, args, .. } => {
                if let K::Member { base, member } = &callee.kind
                    && member.name == "apply"
                    && let K::Name(p) = &base.kind
                    && let Some(Sym::Table(_)) = self.lookup(p)
                {
                    return Some(e.span);
                }
                self.table_apply_in(callee)
                    .or_else(|| args.iter().find_map(|a| self.table_apply_in(&a.value)))
            }
            K::Member { base, .. } => self.table_apply_in(base),
            K::Index { base, index } => self
                .table_apply_in(base)
                .or_else(|| self.table_apply_in(index)),
            K::Slice { base, hi, lo, .. } => self
                .table_apply_in(base)
                .or_else(|| self.table_apply_in(hi))
                .or_else(|| self.table_apply_in(lo)),
            K::Unary { operand, .. } => self.table_apply_in(operand),
            K::Binary { lhs, rhs, .. } => self
                .table_apply_in(lhs)
                .or_else(|| self.table_apply_in(rhs)),
            K::Ternary {
                cond,
                then_expr,
                else_expr,
            } => self
                .table_apply_in(cond)
                .or_else(|| self.table_apply_in(then_expr))
                .or_else(|| self.table_apply_in(else_expr)),
            K::Cast { expr, .. } => self.table_apply_in(expr),
            K::StructInit(items) => items.iter().find_map(|i| self.table_apply_in(&i.value)),
            K::List(items) => items.iter().find_map(|i| self.table_apply_in(i)),
            _ => None,
        }
    }
}
