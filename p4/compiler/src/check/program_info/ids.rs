//! P4Runtime ids: the P4Info objects in the order they are created, the
//! control-plane names of actions and digests, and [`Ids`], which hands
//! out the ids `proc::ids` assigned to them in that order.

use super::DigestFacts;
use super::externs::{ExternSlot, extern_owners, extern_prefix, is_extern_param};
use crate::check::Checker;
use crate::ir;
use p4_target::info::id_prefix;
use std::collections::HashMap;

/// Hands out the P4Runtime ids computed by `proc::ids` in creation order.
pub(super) struct Ids {
    pub(super) ids: Vec<u32>,
    pub(super) names: Vec<(u8, String)>,
    pub(super) next: usize,
    pub(super) mismatch: bool,
}

impl Ids {
    pub(super) fn id(&mut self, prefix: u8, name: &str) -> u32 {
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
pub(super) fn objects(c: &Checker, action_names: &[String]) -> Vec<(u8, String, Option<u32>)> {
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

/// A digest's P4Info name.
pub(super) fn digest_name(c: &Checker, d: &DigestFacts) -> String {
    match d {
        DigestFacts::Struct(s) => c.prog.composites[*s].name.clone(),
        DigestFacts::Scalar { name, .. } => name.clone(),
    }
}
