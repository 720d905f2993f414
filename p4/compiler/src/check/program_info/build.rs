//! [`build_program_info`]: actions with their ids and name clashes, the
//! per-instance tables and extern objects, digests, controller headers and
//! value sets, and the layout that points the IR at them.

use super::DigestFacts;
use super::externs::{
    ExternSlot, extern_owners, extern_param_targets, extern_prefix, extern_slot, is_extern_param,
};
use super::ids::{Ids, action_names, digest_name, objects};
use crate::check::{Checker, codes};
use crate::diag::Diagnostic;
use crate::ir::info::*;
use crate::ir::{self, Handle, Ty};
use p4_target::info::id_prefix;
use std::collections::HashMap;

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
                Diagnostic::error(codes::DUPLICATE, e.to_string())
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
                        codes::DUPLICATE,
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
                        codes::DUPLICATE,
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
                        codes::DUPLICATE,
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
