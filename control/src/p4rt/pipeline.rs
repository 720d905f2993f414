//! SetForwardingPipelineConfig verification (DESIGN "Who owns what",
//! reference §1.4 "Pipeline Get/Set"): the switch program is compiled in,
//! so a client's P4Info is accepted only if it describes the same program.
//! Tables and actions are compared by id and name, and each table's match
//! fields by id, name, width and kind; every difference is reported.

use std::collections::BTreeMap;

use proto::p4::config::v1 as p4info;

use super::error::P4Error;

/// A match field as compared: id, name, width, kind.
type KeyShape<'a> = (u32, &'a str, i32, Option<&'a p4info::match_field::Match>);
/// Tables by id: name and match fields.
type TableShapes<'a> = BTreeMap<u32, (&'a str, Vec<KeyShape<'a>>)>;
/// Actions by id: name and (param id, width).
type ActionShapes<'a> = BTreeMap<u32, (&'a str, Vec<(u32, i32)>)>;

fn tables(p: &p4info::P4Info) -> TableShapes<'_> {
    p.tables
        .iter()
        .filter_map(|t| {
            let pre = t.preamble.as_ref()?;
            let keys = t
                .match_fields
                .iter()
                .map(|m| (m.id, m.name.as_str(), m.bitwidth, m.r#match.as_ref()))
                .collect();
            Some((pre.id, (pre.name.as_str(), keys)))
        })
        .collect()
}

fn actions(p: &p4info::P4Info) -> ActionShapes<'_> {
    p.actions
        .iter()
        .filter_map(|a| {
            let pre = a.preamble.as_ref()?;
            Some((
                pre.id,
                (
                    pre.name.as_str(),
                    a.params.iter().map(|p| (p.id, p.bitwidth)).collect(),
                ),
            ))
        })
        .collect()
}

/// Lists every way `theirs` differs from `ours` (empty = same program).
pub fn differences(ours: &p4info::P4Info, theirs: &p4info::P4Info) -> Vec<String> {
    let mut diffs = Vec::new();
    let (ot, tt) = (tables(ours), tables(theirs));
    for (id, (name, keys)) in &ot {
        match tt.get(id) {
            None => diffs.push(format!("table {id:#x} '{name}' is missing")),
            Some((n, _)) if n != name => diffs.push(format!(
                "table {id:#x} is '{n}', the compiled program has '{name}'"
            )),
            Some((_, k)) if k != keys => {
                diffs.push(format!("table {id:#x} '{name}' has different match fields"))
            }
            _ => {}
        }
    }
    for (id, (name, _)) in &tt {
        if !ot.contains_key(id) {
            diffs.push(format!(
                "table {id:#x} '{name}' is not in the compiled program"
            ));
        }
    }
    let (oa, ta) = (actions(ours), actions(theirs));
    for (id, (name, params)) in &oa {
        match ta.get(id) {
            None => diffs.push(format!("action {id:#x} '{name}' is missing")),
            Some((n, _)) if n != name => diffs.push(format!(
                "action {id:#x} is '{n}', the compiled program has '{name}'"
            )),
            Some((_, p)) if p != params => {
                diffs.push(format!("action {id:#x} '{name}' has different params"))
            }
            _ => {}
        }
    }
    for (id, (name, _)) in &ta {
        if !oa.contains_key(id) {
            diffs.push(format!(
                "action {id:#x} '{name}' is not in the compiled program"
            ));
        }
    }
    diffs
}

/// INVALID_ARGUMENT naming every difference, or Ok.
pub fn verify(
    program: &str,
    ours: &p4info::P4Info,
    theirs: &p4info::P4Info,
) -> Result<(), P4Error> {
    let diffs = differences(ours, theirs);
    if diffs.is_empty() {
        return Ok(());
    }
    let shown: Vec<_> = diffs.iter().take(10).cloned().collect();
    let more = diffs.len().saturating_sub(shown.len());
    Err(P4Error::invalid(
        "config.p4info",
        format!(
            "not the compiled program '{program}' ({} difference(s)): {}{}; another program needs another build (p4-to-rust switch)",
            diffs.len(),
            shown.join("; "),
            if more > 0 {
                format!("; and {more} more")
            } else {
                String::new()
            }
        ),
    ))
}
