//! Builds the [`ProgramInfo`] of a checked program: the P4Info facts
//! (P4Runtime spec §6, P4Info) with p4c's fully qualified names
//! (`MyIngress.ipv4_lpm`; `@name(".x")` absolute, `@name("x")` local), and
//! its [`Layout`].
//!
//! Contract: one table/profile/counter/meter/register per control
//! *instance*, in instance order then declaration order; the layout's
//! per-instance index vectors point at them and the IR is left as the
//! checker built it. All data is owned (nothing is leaked), so compiling
//! many programs in one process keeps nothing of the ones dropped.

use super::Checker;
use crate::diag::Diagnostic;
use crate::ir::info::*;
use crate::ir::{self, Handle, Ty};
use p4_target::info::id_prefix;
use p4_target::runtime::FieldMatch;
use std::collections::HashMap;

/// A parser value set: full name, width of the concatenated element, size,
/// and the element's leaves (dotted name, width, signed) when it is a
/// struct, empty for a `bit<W>` or tuple element.
pub(crate) type ValueSetFacts = (String, u32, u32, Vec<(String, u32, bool)>);

/// A P4Info name as written with `@name`.
#[derive(Clone, Debug, Default)]
pub(crate) struct NameSpec {
    /// `@name(".x")`.
    pub(crate) absolute: bool,
    /// The name (without the leading dot).
    pub(crate) name: String,
    /// `@id(n)`.
    pub(crate) id: Option<u32>,
}

impl NameSpec {
    fn qualify(&self, prefix: &str) -> String {
        if self.absolute || prefix.is_empty() {
            self.name.clone()
        } else {
            format!("{prefix}.{}", self.name)
        }
    }
}

/// A digest the program sends (v1model `digest<T>(receiver, data)`).
#[derive(Clone, Debug)]
pub(crate) enum DigestFacts {
    /// Data of a struct or header type (or a tuple, made a struct).
    Struct(Handle<ir::Composite>),
    /// A bit string (`bit<W>`, `int<W>`, `bool`, a serializable enum).
    Scalar {
        /// The `typedef` name of the type argument, or `digest_N`.
        name: String,
        /// The data's type.
        ty: ir::Ty,
        /// The call (an unnamed type's digest is one per call).
        span: crate::diag::Span,
        /// Named `digest_N` (the type has no name).
        auto: bool,
    },
}

/// One `entries` item.
#[derive(Clone, Debug)]
pub(crate) struct EntryFacts {
    pub(crate) matches: Vec<Option<FieldMatch>>,
    pub(crate) priority: i32,
    pub(crate) action: Handle<ir::Action>,
    pub(crate) params: Vec<u128>,
}

/// What P4Info needs about a table beyond the IR.
#[derive(Clone, Debug, Default)]
pub(crate) struct TableFacts {
    pub(crate) name: NameSpec,
    pub(crate) size: u32,
    pub(crate) default: Option<(Handle<ir::Action>, Vec<u128>)>,
    pub(crate) default_is_const: bool,
    pub(crate) is_const: bool,
    pub(crate) entries: Vec<EntryFacts>,
    pub(crate) direct_counter: Option<u32>,
    pub(crate) direct_meter: Option<u32>,
    pub(crate) idle_timeout: bool,
    pub(crate) scopes: Vec<ActionScope>,
}

/// Facts gathered while checking.
#[derive(Clone, Debug, Default)]
pub(crate) struct Facts {
    /// By table handle index.
    pub(crate) tables: HashMap<usize, TableFacts>,
    /// By (control handle index, extern index).
    pub(crate) extern_names: HashMap<(usize, u32), NameSpec>,
    /// By (parser handle index, extern index).
    pub(crate) parser_extern_names: HashMap<(usize, u32), NameSpec>,
    /// By (function handle index, extern index).
    pub(crate) function_extern_names: HashMap<(usize, u32), NameSpec>,
    /// By (top-level action handle index, extern index).
    pub(crate) action_extern_names: HashMap<(usize, u32), NameSpec>,
    /// Digests, in first-use order.
    pub(crate) digests: Vec<DigestFacts>,
    /// Value sets: (full name, width, size, the element's leaves as
    /// (dotted name, width, signed) when it is a struct).
    pub(crate) value_sets: Vec<ValueSetFacts>,
    /// `@id(n)` of actions, by action handle index.
    pub(crate) action_explicit_ids: HashMap<usize, u32>,
    /// Actions called directly (not through a table), by handle index.
    pub(crate) called_actions: std::collections::HashSet<usize>,
    /// Top-level actions that call `mark_to_drop()` without an argument,
    /// directly or through another action: only controls with a
    /// standard_metadata_t parameter may use them.
    pub(crate) implicit_std_meta_actions: std::collections::HashSet<usize>,
    /// `direct_meter.read` calls in the action being checked: (extern
    /// index in its control, call span); moved to `meter_reads` when the
    /// action is appended.
    pub(crate) pending_meter_reads: Vec<(u32, crate::diag::Span)>,
    /// By action handle index: the direct meters the action reads, directly
    /// or through actions it calls (extern index in its control, span).
    pub(crate) meter_reads: HashMap<usize, Vec<(u32, crate::diag::Span)>>,
    /// `direct_counter.count` calls in the action being checked, as
    /// `pending_meter_reads`; moved to `counter_counts`.
    pub(crate) pending_counter_counts: Vec<(u32, crate::diag::Span)>,
    /// By action handle index: the direct counters the action counts,
    /// directly or through actions it calls (extern index, span).
    pub(crate) counter_counts: HashMap<usize, Vec<(u32, crate::diag::Span)>>,
}

impl Facts {
    /// Index of the digest for struct `c`, adding it on first use.
    pub(crate) fn digest_index(&mut self, c: Handle<ir::Composite>) -> u32 {
        let found = self
            .digests
            .iter()
            .position(|d| matches!(d, DigestFacts::Struct(s) if *s == c));
        match found {
            Some(i) => i as u32,
            None => {
                self.digests.push(DigestFacts::Struct(c));
                (self.digests.len() - 1) as u32
            }
        }
    }

    /// Index of the digest of a bit string of type `ty` sent at `span`:
    /// named `typedef_name` when the type argument names one (all calls
    /// with it share the digest), else `digest_N` for the N-th such call
    /// (p4c's name when the type has none).
    pub(crate) fn scalar_digest_index(
        &mut self,
        typedef_name: Option<String>,
        ty: ir::Ty,
        span: crate::diag::Span,
    ) -> u32 {
        let found = self.digests.iter().position(|d| match (d, &typedef_name) {
            (DigestFacts::Scalar { name, .. }, Some(n)) => name == n,
            (
                DigestFacts::Scalar {
                    span: s,
                    auto: true,
                    ..
                },
                None,
            ) => *s == span,
            _ => false,
        });
        if let Some(i) = found {
            return i as u32;
        }
        let auto = typedef_name.is_none();
        let name = typedef_name.unwrap_or_else(|| {
            let n = self
                .digests
                .iter()
                .filter(|d| matches!(d, DigestFacts::Scalar { auto: true, .. }))
                .count();
            format!("digest_{n}")
        });
        self.digests.push(DigestFacts::Scalar {
            name,
            ty,
            span,
            auto,
        });
        (self.digests.len() - 1) as u32
    }
}

/// Hands out the P4Runtime ids computed by `proc::ids` in creation order.
struct Ids {
    ids: Vec<u32>,
    names: Vec<(u8, String)>,
    next: usize,
    mismatch: bool,
}

impl Ids {
    fn id(&mut self, prefix: u8, name: &str) -> u32 {
        let i = self.next;
        self.next += 1;
        match (self.ids.get(i), self.names.get(i)) {
            (Some(id), Some((p, n))) if *p == prefix && n == name => *id,
            _ => {
                self.mismatch = true;
                0
            }
        }
    }
}

/// The control-plane name of each action, indexed by handle. p4c names an
/// action of a control by the path of the control's instance
/// (`ingress.c.a` for action `a` of control type `compute` instantiated as
/// `c` in `ingress`). Each instance of a control that declares actions is
/// an IR control of its own (`Checker::instance_copy`), so an action has
/// one instance; one that has none (or several, e.g. one control passed
/// twice to `V1Switch`) keeps its type-qualified name (`compute.a`).
pub(crate) fn action_names(c: &Checker) -> Vec<String> {
    let mut paths: HashMap<usize, Vec<&str>> = HashMap::new();
    for inst in &c.prog.instances {
        paths
            .entry(inst.control.index())
            .or_default()
            .push(&inst.path);
    }
    c.prog
        .actions
        .iter()
        .map(|(_, a)| match (a.control, &a.local_name) {
            (Some(ctl), Some(local)) => match paths.get(&ctl.index()).map(Vec::as_slice) {
                Some([path]) => format!("{path}.{local}"),
                _ => a.p4_name.clone(),
            },
            _ => a.p4_name.clone(),
        })
        .collect()
}

/// The P4Info objects in the order `build_program_info` creates them:
/// (prefix, fully qualified name, `@id`).
fn objects(c: &Checker, action_names: &[String]) -> Vec<(u8, String, Option<u32>)> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (h, _) in c.prog.actions.iter() {
        let name = &action_names[h.index()];
        if seen.insert(name.clone()) {
            out.push((
                id_prefix::ACTION,
                name.clone(),
                c.facts.action_explicit_ids.get(&h.index()).copied(),
            ));
        }
    }
    for owner in extern_owners(c) {
        if let ExternSlot::Instance(ii) = owner.slot {
            let inst = &c.prog.instances[ii];
            for th in &c.prog.controls[inst.control].tables {
                let facts = c.facts.tables.get(&th.index()).cloned().unwrap_or_default();
                out.push((
                    id_prefix::TABLE,
                    facts.name.qualify(&inst.path),
                    facts.name.id,
                ));
            }
        }
        for (ei, (e, spec)) in owner.externs.iter().enumerate() {
            if is_extern_param(c, owner.slot, ei) {
                // The caller's object, not one of its own.
                continue;
            }
            if matches!(e.kind, ir::ExternKind::User { .. }) {
                // Not a P4Info object (the target supplies it).
                continue;
            }
            out.push((extern_prefix(&e.kind), spec.qualify(&owner.path), spec.id));
        }
    }
    for d in &c.facts.digests {
        out.push((id_prefix::DIGEST, digest_name(c, d), None));
    }
    for (_, comp) in c.prog.composites.iter() {
        if let Some(n) = &comp.controller_header {
            out.push((id_prefix::CONTROLLER_HEADER, n.clone(), None));
        }
    }
    for (n, ..) in &c.facts.value_sets {
        out.push((id_prefix::VALUE_SET, n.clone(), None));
    }
    out
}

/// Whether extern `ei` of the block in `slot` is an extern parameter of
/// its control or parser (`check::extern_params`): it stands for the
/// caller's instance.
fn is_extern_param(c: &Checker, slot: ExternSlot, ei: usize) -> bool {
    let slots = match slot {
        ExternSlot::Instance(ii) => {
            let ctl = c.prog.instances[ii].control.index();
            c.extern_params.controls.get(&ctl)
        }
        ExternSlot::Parser(h) => c.extern_params.parsers.get(&h),
        ExternSlot::Function(_) | ExternSlot::Action(_) => None,
    };
    slots.is_some_and(|slots| slots.iter().any(|s| s.inst as usize == ei))
}

/// Where each extern apply parameter of a control instance is bound:
/// (instance, extern index) → (the calling instance, the index of the
/// instance passed among its externs). A caller comes before its
/// sub-instances in [`ir::Program::instances`], so its slots are placed
/// first.
fn extern_param_targets(c: &Checker) -> HashMap<(usize, usize), (usize, usize)> {
    let mut out = HashMap::new();
    for (pi, parent) in c.prog.instances.iter().enumerate() {
        for (j, &child) in parent.sub.iter().enumerate() {
            let child = child as usize;
            let ctl = c.prog.instances[child].control.index();
            let Some(slots) = c.extern_params.controls.get(&ctl) else {
                continue;
            };
            let key = (parent.control.index(), j as u32);
            // Apply parameters are bound at the apply, constructor ones
            // where the instance is declared; each list in slot order.
            let state = &c.extern_params;
            for (ctor, bindings) in [(false, &state.apply_bindings), (true, &state.ctor_bindings)] {
                let Some(bound) = bindings.get(&key) else {
                    continue;
                };
                let of_kind = slots.iter().filter(|s| s.ctor == ctor);
                for (s, &e) in of_kind.zip(bound) {
                    out.insert((child, s.inst as usize), (pi, e as usize));
                }
            }
        }
    }
    out
}

/// Where a block's extern instances are placed in [`Layout`].
#[derive(Clone, Copy)]
enum ExternSlot {
    /// [`Layout::instances`].
    Instance(usize),
    /// [`Layout::parsers`], by parser handle index.
    Parser(usize),
    /// [`Layout::functions`], by function handle index.
    Function(usize),
    /// [`Layout::actions`], by action handle index.
    Action(usize),
}

/// Where extern `ei` of a block in `slot` is placed.
fn extern_slot(layout: &mut Layout, slot: ExternSlot, ei: usize) -> &mut u32 {
    match slot {
        ExternSlot::Instance(ii) => &mut layout.instances[ii].externs[ei],
        ExternSlot::Parser(h) => &mut layout.parsers[h][ei],
        ExternSlot::Function(h) => &mut layout.functions[h][ei],
        ExternSlot::Action(h) => &mut layout.actions[h][ei],
    }
}

/// A block that holds extern instances: a control instance, a parser or a
/// function.
struct ExternOwner<'a> {
    slot: ExternSlot,
    /// P4Info name prefix of its own instances.
    path: String,
    /// Its instances with their P4Info names.
    externs: Vec<(&'a ir::ExternInst, NameSpec)>,
}

/// Every block holding extern instances, in the order their P4Info
/// objects are created: control instances, then parsers (their own
/// instances named after the parser, as its value sets are), then
/// functions and top-level actions (which hold only top-level instances,
/// merged with the controls' copies).
fn extern_owners(c: &Checker) -> Vec<ExternOwner<'_>> {
    let f = &c.facts;
    let mut out = Vec::new();
    for (ii, inst) in c.prog.instances.iter().enumerate() {
        let externs = &c.prog.controls[inst.control].externs;
        out.push(ExternOwner {
            slot: ExternSlot::Instance(ii),
            path: inst.path.clone(),
            externs: named(&f.extern_names, inst.control.index(), externs),
        });
    }
    for (h, p) in c.prog.parsers.iter() {
        out.push(ExternOwner {
            slot: ExternSlot::Parser(h.index()),
            path: p.name.clone(),
            externs: named(&f.parser_extern_names, h.index(), &p.externs),
        });
    }
    for (h, func) in c.prog.functions.iter() {
        out.push(ExternOwner {
            slot: ExternSlot::Function(h.index()),
            path: String::new(),
            externs: named(&f.function_extern_names, h.index(), &func.externs),
        });
    }
    for (h, a) in c.prog.actions.iter() {
        out.push(ExternOwner {
            slot: ExternSlot::Action(h.index()),
            path: String::new(),
            externs: named(&f.action_extern_names, h.index(), &a.externs),
        });
    }
    out
}

/// Block `h`'s extern instances with their P4Info names: the name the
/// checker recorded for an instance in `names`, else its declared name.
fn named<'a>(
    names: &HashMap<(usize, u32), NameSpec>,
    h: usize,
    externs: &'a [ir::ExternInst],
) -> Vec<(&'a ir::ExternInst, NameSpec)> {
    externs
        .iter()
        .enumerate()
        .map(|(ei, e)| {
            let spec = names.get(&(h, ei as u32)).cloned().unwrap_or(NameSpec {
                absolute: false,
                name: e.name.clone(),
                id: None,
            });
            (e, spec)
        })
        .collect()
}

/// A digest's P4Info name.
fn digest_name(c: &Checker, d: &DigestFacts) -> String {
    match d {
        DigestFacts::Struct(s) => c.prog.composites[*s].name.clone(),
        DigestFacts::Scalar { name, .. } => name.clone(),
    }
}

/// The P4Info id prefix of an extern object kind.
fn extern_prefix(kind: &ir::ExternKind) -> u8 {
    match kind {
        ir::ExternKind::Register { .. } => id_prefix::REGISTER,
        ir::ExternKind::Counter { .. } => id_prefix::COUNTER,
        ir::ExternKind::DirectCounter(_) => id_prefix::DIRECT_COUNTER,
        ir::ExternKind::Meter { .. } => id_prefix::METER,
        ir::ExternKind::DirectMeter(_) => id_prefix::DIRECT_METER,
        ir::ExternKind::ActionProfile(_) | ir::ExternKind::ActionSelector(..) => {
            id_prefix::ACTION_PROFILE
        }
        // No P4Info object: the key only merges a top-level instance's copies.
        ir::ExternKind::User { .. } => 0,
    }
}

fn scalar_fields(c: &Checker, comp: Handle<ir::Composite>) -> Vec<MetaFieldInfo> {
    c.prog.composites[comp]
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| MetaFieldInfo {
            id: i as u32 + 1,
            name: f.name.clone(),
            bitwidth: f.ty.scalar_width(&c.prog).unwrap_or(32),
            signed: f.ty.is_signed(&c.prog),
        })
        .collect()
}

/// Builds the ProgramInfo with its layout (instance index vectors, action
/// ids, user extern objects).
pub(crate) fn build_program_info(c: &Checker) -> Result<ProgramInfo, Vec<Diagnostic>> {
    let names = action_names(c);
    let objs = objects(c, &names);
    let refs: Vec<(u8, &str, Option<u32>)> =
        objs.iter().map(|(p, n, i)| (*p, n.as_str(), *i)).collect();
    let assigned = match crate::proc::ids::try_assign_ids(&refs) {
        Ok(v) => v,
        Err(e) => {
            return Err(vec![
                Diagnostic::error(super::codes::DUPLICATE, e.to_string())
                    .with_note("P4Runtime ids come from `@id` annotations or the object names"),
            ]);
        }
    };
    let mut ids = Ids {
        ids: assigned,
        names: objs.iter().map(|(p, n, _)| (*p, n.clone())).collect(),
        next: 0,
        mismatch: false,
    };
    // Actions: one per declaration, ids in declaration order.
    let mut actions = Vec::new();
    let mut action_ids = Vec::new();
    let mut seen: HashMap<String, u32> = HashMap::new();
    // Copies of one declaration (a control checked per constructor
    // argument set) share a name and one P4Info entry; so do two
    // declarations with the same data parameters in different tables (p4c
    // merges them, e.g. `@name("_nop")` on two empty actions). Two with
    // different parameters, or in one table, may not share a name, unless
    // one is never used: p4c drops unused actions before naming objects.
    let mut used: std::collections::HashSet<usize> = c.facts.called_actions.clone();
    for (_, t) in c.prog.tables.iter() {
        used.extend(t.actions.iter().map(|a| a.index()));
    }
    let used_names: std::collections::HashSet<&str> = c
        .prog
        .actions
        .iter()
        .filter(|(h, _)| used.contains(&h.index()))
        .map(|(h, _)| names[h.index()].as_str())
        .collect();
    // An action's data parameters as P4Info sees them: names and widths.
    type Signature = Vec<(String, Option<u32>)>;
    let signature = |a: &ir::Action| -> Signature {
        a.data_params()
            .iter()
            .map(|p| (p.name.clone(), p.ty.scalar_width(&c.prog)))
            .collect()
    };
    // Where an action sits: its control (`None` at top level) and whether
    // its name is absolute (`@name(".x")` in a control, or top level).
    let place = |a: &ir::Action| (a.control, a.local_name.is_none());
    let mut declared: HashMap<&str, (crate::diag::Span, Signature, (Option<_>, bool))> =
        HashMap::new();
    let mut clashes = Vec::new();
    for (h, a) in c.prog.actions.iter() {
        if !used.contains(&h.index()) {
            continue;
        }
        let span = c.prog.actions.span(h);
        let name = names[h.index()].as_str();
        match declared.get(name) {
            Some((first, sig, (ctl, absolute))) if *first != span => {
                // An absolute name shared by actions of two different
                // controls (or a control and the top level) is a clash
                // even when the parameters agree: p4c's duplicate
                // control-plane name check refuses it (its multicast-bmv2,
                // two `@name("._drop")` in ingress and egress).
                let across = *ctl != a.control && (*absolute || place(a).1);
                if *sig != signature(a) || across {
                    let mut d = Diagnostic::error(
                        super::codes::DUPLICATE,
                        format!("two actions have the control-plane name `{name}`"),
                    )
                    .with_primary(span, "this action")
                    .with_secondary(*first, "and this one");
                    if across && *sig == signature(a) {
                        d = d.with_note(
                            "actions of different controls may not share an absolute `@name(\".x\")`; give each its own name",
                        );
                    }
                    clashes.push(d);
                }
            }
            Some(_) => {}
            None => {
                declared.insert(name, (span, signature(a), place(a)));
            }
        }
    }
    for (_, t) in c.prog.tables.iter() {
        for (i, a) in t.actions.iter().enumerate() {
            let (name, span) = (&names[a.index()], c.prog.actions.span(*a));
            let twin = t.actions[..i]
                .iter()
                .find(|b| names[b.index()] == *name && c.prog.actions.span(**b) != span);
            if let Some(b) = twin {
                clashes.push(
                    Diagnostic::error(
                        super::codes::DUPLICATE,
                        format!("two actions have the control-plane name `{name}`"),
                    )
                    .with_primary(span, "this action")
                    .with_secondary(c.prog.actions.span(*b), "and this one"),
                );
            }
        }
    }
    if !clashes.is_empty() {
        return Err(clashes);
    }
    // An unused action named like a used one takes that one's id (filled
    // in below) and adds no P4Info entry of its own.
    let mut shadowed = Vec::new();
    for (h, a) in c.prog.actions.iter() {
        let name = &names[h.index()];
        if !used.contains(&h.index()) && used_names.contains(name.as_str()) {
            shadowed.push((action_ids.len(), name.as_str()));
            action_ids.push(0);
            continue;
        }
        if let Some(id) = seen.get(name) {
            action_ids.push(*id);
            continue;
        }
        let id = ids.id(id_prefix::ACTION, name);
        seen.insert(name.clone(), id);
        action_ids.push(id);
        let params: Vec<ParamInfo> = a
            .data_params()
            .iter()
            .enumerate()
            .map(|(i, p)| ParamInfo {
                id: i as u32 + 1,
                name: p.name.clone(),
                bitwidth: p.ty.scalar_width(&c.prog).unwrap_or(1),
            })
            .collect();
        actions.push(ActionInfo {
            id,
            name: name.clone(),
            params,
        });
    }
    for (i, name) in shadowed {
        action_ids[i] = seen.get(name).copied().unwrap_or(0);
    }
    let mut layout = Layout {
        instances: c
            .prog
            .instances
            .iter()
            .map(|inst| InstanceLayout {
                tables: vec![u32::MAX; c.prog.controls[inst.control].tables.len()],
                externs: vec![u32::MAX; c.prog.controls[inst.control].externs.len()],
            })
            .collect(),
        parsers: c
            .prog
            .parsers
            .iter()
            .map(|(_, p)| vec![u32::MAX; p.externs.len()])
            .collect(),
        functions: c
            .prog
            .functions
            .iter()
            .map(|(_, f)| vec![u32::MAX; f.externs.len()])
            .collect(),
        actions: c
            .prog
            .actions
            .iter()
            .map(|(_, a)| vec![u32::MAX; a.externs.len()])
            .collect(),
        action_ids: Vec::new(),
        user_instances: Vec::new(),
    };

    // Per instance objects. First pass: ids and indices.
    struct TablePlan {
        inst: usize,
        th: Handle<ir::Table>,
        id: u32,
        name: String,
    }
    let mut table_plans = Vec::new();
    let mut profiles = Vec::new();
    let mut profile_tables: Vec<Vec<u32>> = Vec::new();
    let mut counters = Vec::new();
    let mut meters = Vec::new();
    let mut registers = Vec::new();
    let mut extern_ids: HashMap<(usize, u32), u32> = HashMap::new();
    let mut seen_externs: HashMap<(u8, String), (usize, u32)> = HashMap::new();
    let param_targets = extern_param_targets(c);
    // Table names must be unique in P4Info: two tables may end up with one
    // name through `@name` (an absolute `@name(".t")` in a control
    // instantiated twice, or two tables given one `@name`); p4c refuses
    // both, as a control plane could not tell them apart.
    let mut table_names: HashMap<String, crate::diag::Span> = HashMap::new();
    let mut table_clashes = Vec::new();
    for owner in extern_owners(c) {
        if let ExternSlot::Instance(ii) = owner.slot {
            let inst = &c.prog.instances[ii];
            let ctl = &c.prog.controls[inst.control];
            for (ti, th) in ctl.tables.iter().enumerate() {
                let facts = c.facts.tables.get(&th.index()).cloned().unwrap_or_default();
                let name = facts.name.qualify(&inst.path);
                let span = c.prog.tables.span(*th);
                if let Some(first) = table_names.insert(name.clone(), span) {
                    let mut d = Diagnostic::error(
                        super::codes::DUPLICATE,
                        format!("two tables have the control-plane name `{name}`"),
                    )
                    .with_primary(span, "this table");
                    d = if first != span {
                        d.with_secondary(first, "and this one")
                    } else {
                        d.with_note(
                        "its control is instantiated twice; a table with an absolute `@name(\".x\")` may be in only one instance",
                    )
                    };
                    table_clashes.push(d);
                }
                let id = ids.id(id_prefix::TABLE, &name);
                layout.instances[ii].tables[ti] = table_plans.len() as u32;
                table_plans.push(TablePlan {
                    inst: ii,
                    th: *th,
                    id,
                    name,
                });
            }
        }
        for (ei, (e, spec)) in owner.externs.iter().enumerate() {
            if let ExternSlot::Instance(ii) = owner.slot
                && let Some(&(pi, pe)) = param_targets.get(&(ii, ei))
            {
                // An extern apply parameter: the caller's object.
                layout.instances[ii].externs[ei] = layout.instances[pi].externs[pe];
                if let Some(&id) = extern_ids.get(&(pi, pe as u32)) {
                    extern_ids.insert((ii, ei as u32), id);
                }
                continue;
            }
            if matches!(owner.slot, ExternSlot::Parser(_)) && is_extern_param(c, owner.slot, ei) {
                // A parser's extern parameter: placed below, once its
                // caller's objects are.
                continue;
            }
            let e = *e;
            let qualified = spec.qualify(&owner.path);
            let key = (extern_prefix(&e.kind), qualified.clone());
            if let ir::ExternKind::User { decl, ctor, args } = &e.kind {
                // A user extern object: one per qualified name, program-wide.
                let idx = match seen_externs.get(&key) {
                    Some(&(idx, _)) => idx,
                    None => {
                        layout.user_instances.push(ir::UserInstance {
                            name: qualified.clone(),
                            decl: *decl,
                            ctor: *ctor,
                            args: args.clone(),
                        });
                        let idx = layout.user_instances.len() - 1;
                        seen_externs.insert(key, (idx, 0));
                        idx
                    }
                };
                *extern_slot(&mut layout, owner.slot, ei) = idx as u32;
                continue;
            }
            if let Some(&(idx, id)) = seen_externs.get(&key) {
                // The same object seen from another control (a top-level
                // instance, or `@name(".x")`): one state, one id.
                let _ = ids.id(key.0, &qualified);
                *extern_slot(&mut layout, owner.slot, ei) = idx as u32;
                if let ExternSlot::Instance(ii) = owner.slot {
                    extern_ids.insert((ii, ei as u32), id);
                }
                continue;
            }
            let name = qualified.clone();
            let (idx, id) = match &e.kind {
                // Handled above.
                ir::ExternKind::User { .. } => continue,
                ir::ExternKind::Register { cell, width, size } => {
                    let id = ids.id(id_prefix::REGISTER, &qualified);
                    registers.push(RegisterInfo {
                        id,
                        name,
                        bitwidth: *width,
                        signed: cell.is_signed(&c.prog),
                        size: *size,
                    });
                    (registers.len() - 1, id)
                }
                ir::ExternKind::Counter { size, unit } => {
                    let id = ids.id(id_prefix::COUNTER, &qualified);
                    counters.push(CounterInfo {
                        id,
                        name,
                        unit: *unit,
                        size: *size,
                        direct_table: None,
                    });
                    (counters.len() - 1, id)
                }
                ir::ExternKind::DirectCounter(unit) => {
                    let id = ids.id(id_prefix::DIRECT_COUNTER, &qualified);
                    counters.push(CounterInfo {
                        id,
                        name,
                        unit: *unit,
                        size: 0,
                        direct_table: None,
                    });
                    (counters.len() - 1, id)
                }
                ir::ExternKind::Meter { size, unit } => {
                    let id = ids.id(id_prefix::METER, &qualified);
                    meters.push(MeterInfo {
                        id,
                        name,
                        unit: *unit,
                        size: *size,
                        direct_table: None,
                    });
                    (meters.len() - 1, id)
                }
                ir::ExternKind::DirectMeter(unit) => {
                    let id = ids.id(id_prefix::DIRECT_METER, &qualified);
                    meters.push(MeterInfo {
                        id,
                        name,
                        unit: *unit,
                        size: 0,
                        direct_table: None,
                    });
                    (meters.len() - 1, id)
                }
                ir::ExternKind::ActionProfile(size) => {
                    let id = ids.id(id_prefix::ACTION_PROFILE, &qualified);
                    profiles.push(ActionProfileInfo {
                        id,
                        name,
                        table_ids: Vec::new(),
                        selector: None,
                        size: *size,
                    });
                    profile_tables.push(Vec::new());
                    (profiles.len() - 1, id)
                }
                ir::ExternKind::ActionSelector(algo, size, w) => {
                    let id = ids.id(id_prefix::ACTION_PROFILE, &qualified);
                    profiles.push(ActionProfileInfo {
                        id,
                        name,
                        table_ids: Vec::new(),
                        selector: Some((*algo, *w)),
                        size: *size,
                    });
                    profile_tables.push(Vec::new());
                    (profiles.len() - 1, id)
                }
            };
            *extern_slot(&mut layout, owner.slot, ei) = idx as u32;
            if let ExternSlot::Instance(ii) = owner.slot {
                extern_ids.insert((ii, ei as u32), id);
            }
            seen_externs.insert(key, (idx, id));
        }
    }
    if !table_clashes.is_empty() {
        return Err(table_clashes);
    }
    // A parser's extern parameters point at the calling parser's objects.
    // A caller is checked, so appended, after every parser it applies or
    // instantiates, so taking callees from the last makes a caller's own
    // parameters placed before its callees read them.
    let mut binds: Vec<((usize, u32), (usize, u32))> = c
        .extern_params
        .parser_bindings
        .iter()
        .map(|(k, v)| (*k, *v))
        .collect();
    binds.sort_by_key(|&((callee, inst), _)| (std::cmp::Reverse(callee), inst));
    for ((callee, inst), (caller, passed)) in binds {
        layout.parsers[callee][inst as usize] = layout.parsers[caller][passed as usize];
    }
    // Second pass: tables, now that extern ids are known.
    let action_id = |a: Handle<ir::Action>| action_ids[a.index()];
    let mut tables = Vec::new();
    for plan in &table_plans {
        let t = &c.prog.tables[plan.th];
        let facts = c
            .facts
            .tables
            .get(&plan.th.index())
            .cloned()
            .unwrap_or_default();
        let inst = &layout.instances[plan.inst];
        let keys: Vec<KeyInfo> = t
            .keys
            .iter()
            .filter_map(|k| match k.kind {
                ir::KeyKind::Match(kind) => Some((k, kind)),
                ir::KeyKind::Selector => None,
            })
            .enumerate()
            .map(|(i, (k, kind))| KeyInfo {
                id: i as u32 + 1,
                name: k.name.clone(),
                bitwidth: match &k.expr.ty {
                    Ty::Error | Ty::Enum(_) => 32,
                    ty => ty.scalar_width(&c.prog).unwrap_or(32),
                },
                kind,
            })
            .collect();
        let acts: Vec<ActionRef> = t
            .actions
            .iter()
            .zip(
                facts
                    .scopes
                    .iter()
                    .copied()
                    .chain(std::iter::repeat(ActionScope::TableAndDefault)),
            )
            .map(|(a, scope)| ActionRef {
                id: action_id(*a),
                scope,
            })
            .collect();
        let implementation = t.implementation.map(|e| {
            let pi = inst.externs[e as usize] as usize;
            profile_tables[pi].push(plan.id);
            extern_ids[&(plan.inst, e)]
        });
        let direct_counter = facts.direct_counter.map(|e| {
            let ci = inst.externs[e as usize] as usize;
            counters[ci].direct_table = Some(plan.id);
            extern_ids[&(plan.inst, e)]
        });
        let direct_meter = facts.direct_meter.map(|e| {
            let mi = inst.externs[e as usize] as usize;
            meters[mi].direct_table = Some(plan.id);
            extern_ids[&(plan.inst, e)]
        });
        let default_action = match &facts.default {
            Some((a, params)) => (action_id(*a), params.clone()),
            None => (0, Vec::new()),
        };
        let const_entries: Vec<ConstEntryInfo> = facts
            .entries
            .iter()
            .map(|e| ConstEntryInfo {
                matches: e.matches.clone(),
                priority: e.priority,
                action_id: action_id(e.action),
                params: e.params.clone(),
            })
            .collect();
        tables.push(TableInfo {
            id: plan.id,
            name: plan.name.clone(),
            keys,
            actions: acts,
            size: facts.size,
            implementation,
            default_action,
            default_is_const: facts.default_is_const,
            is_const: facts.is_const,
            const_entries,
            direct_counter,
            direct_meter,
            idle_timeout: facts.idle_timeout,
        });
    }
    for (p, ts) in profiles.iter_mut().zip(profile_tables) {
        p.table_ids = ts;
    }
    let digests: Vec<DigestInfo> = c
        .facts
        .digests
        .iter()
        .map(|d| {
            let name = digest_name(c, d);
            let id = ids.id(id_prefix::DIGEST, &name);
            match d {
                DigestFacts::Struct(s) => DigestInfo {
                    id,
                    name,
                    fields: scalar_fields(c, *s),
                    scalar: false,
                },
                DigestFacts::Scalar { ty, .. } => DigestInfo {
                    id,
                    fields: vec![MetaFieldInfo {
                        id: 1,
                        name: name.clone(),
                        bitwidth: ty.scalar_width(&c.prog).unwrap_or(32),
                        signed: ty.is_signed(&c.prog),
                    }],
                    name,
                    scalar: true,
                },
            }
        })
        .collect();
    let mut controller_headers = Vec::new();
    for (h, comp) in c.prog.composites.iter() {
        if let Some(n) = &comp.controller_header {
            controller_headers.push(ControllerHeaderInfo {
                id: ids.id(id_prefix::CONTROLLER_HEADER, n),
                name: n.clone(),
                fields: scalar_fields(c, h),
            });
        }
    }
    let value_sets: Vec<ValueSetInfo> = c
        .facts
        .value_sets
        .iter()
        .map(|(n, w, s, leaves)| ValueSetInfo {
            id: ids.id(id_prefix::VALUE_SET, n),
            name: n.clone(),
            bitwidth: *w,
            size: *s,
            fields: leaves
                .iter()
                .enumerate()
                .map(|(i, (name, bitwidth, signed))| MetaFieldInfo {
                    id: i as u32 + 1,
                    name: name.clone(),
                    bitwidth: *bitwidth,
                    signed: *signed,
                })
                .collect(),
        })
        .collect();
    if ids.mismatch || ids.next != ids.ids.len() {
        return Err(vec![Diagnostic::bug(
            "P4Info objects were created in a different order than their ids were assigned",
        )]);
    }
    layout.action_ids = action_ids;
    Ok(ProgramInfo {
        name: c.prog.name.clone(),
        arch: "v1model".into(),
        tables,
        actions,
        action_profiles: profiles,
        counters,
        meters,
        registers,
        digests,
        controller_headers,
        value_sets,
        layout,
    })
}
