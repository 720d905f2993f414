//! Where extern instances are placed in the [`Layout`]: the blocks that
//! hold them, in P4Info creation order, with their P4Info names, and the
//! extern parameters that stand for a caller's instance.

use super::NameSpec;
use crate::check::Checker;
use crate::ir;
use crate::ir::info::Layout;
use p4_target::info::id_prefix;
use std::collections::HashMap;

/// Whether extern `ei` of the block in `slot` is an extern parameter of
/// its control or parser (`check::extern_params`): it stands for the
/// caller's instance.
pub(super) fn is_extern_param(c: &Checker, slot: ExternSlot, ei: usize) -> bool {
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
pub(super) fn extern_param_targets(c: &Checker) -> HashMap<(usize, usize), (usize, usize)> {
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
pub(super) enum ExternSlot {
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
pub(super) fn extern_slot(layout: &mut Layout, slot: ExternSlot, ei: usize) -> &mut u32 {
    match slot {
        ExternSlot::Instance(ii) => &mut layout.instances[ii].externs[ei],
        ExternSlot::Parser(h) => &mut layout.parsers[h][ei],
        ExternSlot::Function(h) => &mut layout.functions[h][ei],
        ExternSlot::Action(h) => &mut layout.actions[h][ei],
    }
}

/// A block that holds extern instances: a control instance, a parser or a
/// function.
pub(super) struct ExternOwner<'a> {
    pub(super) slot: ExternSlot,
    /// P4Info name prefix of its own instances.
    pub(super) path: String,
    /// Its instances with their P4Info names.
    pub(super) externs: Vec<(&'a ir::ExternInst, NameSpec)>,
}

/// Every block holding extern instances, in the order their P4Info
/// objects are created: control instances, then parsers (their own
/// instances named after the parser, as its value sets are), then
/// functions and top-level actions (which hold only top-level instances,
/// merged with the controls' copies).
pub(super) fn extern_owners(c: &Checker) -> Vec<ExternOwner<'_>> {
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

/// The P4Info id prefix of an extern object kind.
pub(super) fn extern_prefix(kind: &ir::ExternKind) -> u8 {
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
