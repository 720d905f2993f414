//! SetForwardingPipelineConfig verification (DESIGN "Who owns what",
//! reference §1.4 "Pipeline Get/Set", P4Runtime §14): whether a client's
//! P4Info describes a given program (the running one, the compiled-in one
//! or a loaded library's), and which tables two programs share unchanged
//! (RECONCILE_AND_COMMIT). Every object is compared by id and name: tables
//! by their match fields (id, name, width, kind), size, implementation,
//! direct resources, const default action, const entries and idle timeout;
//! actions by their params; counters, meters, registers, action profiles,
//! digests, value sets and controller headers by what the switch would
//! have to realise (size, unit, tables, fields; not type specs, which have
//! several P4Info forms). Every difference is reported. A P4Info whose `platform_properties` ask for
//! more multicast groups than the switch has is refused (§6.2).

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

/// Multicast groups the switch holds: ids 1..=65535 (`mcast_grp` is 16
/// bits); replicas are limited by memory only.
pub const MULTICAST_GROUPS: i32 = 65_535;

/// §6.2 `PkgInfo.platform_properties`: a P4Info asking for more multicast
/// groups than the switch has is INVALID_ARGUMENT (what it needs cannot
/// be realised); replica counts are not limited here.
fn check_platform(p: &p4info::P4Info) -> Result<(), P4Error> {
    let Some(props) = p
        .pkg_info
        .as_ref()
        .and_then(|k| k.platform_properties.as_ref())
    else {
        return Ok(());
    };
    if props.multicast_group_table_size > MULTICAST_GROUPS {
        return Err(P4Error::invalid(
            "config.p4info.pkg_info.platform_properties.multicast_group_table_size",
            format!(
                "{} multicast groups asked for; this switch has {MULTICAST_GROUPS}",
                props.multicast_group_table_size
            ),
        ));
    }
    Ok(())
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
    let (oo, to) = (objects(ours), objects(theirs));
    for ((what, id), (name, shape)) in &oo {
        match to.get(&(*what, *id)) {
            // A missing or renamed table was reported above.
            None if *what == "table" => {}
            None => diffs.push(format!("{what} {id:#x} '{name}' is missing")),
            Some((n, _)) if n != name && *what != "table" => diffs.push(format!(
                "{what} {id:#x} is '{n}', the compiled program has '{name}'"
            )),
            Some((_, sh)) if sh != shape => diffs.push(format!(
                "{what} {id:#x} '{name}' differs: {sh} (ours: {shape})"
            )),
            _ => {}
        }
    }
    for ((what, id), (name, _)) in &to {
        if *what != "table" && !oo.contains_key(&(*what, *id)) {
            diffs.push(format!(
                "{what} {id:#x} '{name}' is not in the compiled program"
            ));
        }
    }
    diffs
}

/// Everything else a P4Info declares, by (kind, id): its name and what the
/// switch would have to realise, as text. For tables, the properties
/// besides their keys (size, implementation, direct resources, const
/// default action, const entries, idle timeout).
fn objects(p: &p4info::P4Info) -> BTreeMap<(&'static str, u32), (String, String)> {
    let mut out = BTreeMap::new();
    let mut put = |pre: Option<&p4info::Preamble>, what: &'static str, shape: String| {
        if let Some(pre) = pre {
            out.insert((what, pre.id), (pre.name.clone(), shape));
        }
    };
    for t in &p.tables {
        let mut direct = t.direct_resource_ids.clone();
        direct.sort_unstable();
        put(
            t.preamble.as_ref(),
            "table",
            format!(
                "size {}, implementation {:#x}, direct resources {direct:x?}, const default action {:#x}, const {}, idle timeout {}",
                t.size,
                t.implementation_id,
                t.const_default_action_id,
                t.is_const_table,
                t.idle_timeout_behavior
            ),
        );
    }
    for c in &p.counters {
        let unit = c.spec.as_ref().map(|s| s.unit);
        put(
            c.preamble.as_ref(),
            "counter",
            format!("size {}, unit {unit:?}", c.size),
        );
    }
    for c in &p.direct_counters {
        let unit = c.spec.as_ref().map(|s| s.unit);
        put(
            c.preamble.as_ref(),
            "direct counter",
            format!("table {:#x}, unit {unit:?}", c.direct_table_id),
        );
    }
    for m in &p.meters {
        let unit = m.spec.as_ref().map(|s| s.unit);
        put(
            m.preamble.as_ref(),
            "meter",
            format!("size {}, unit {unit:?}", m.size),
        );
    }
    for m in &p.direct_meters {
        let unit = m.spec.as_ref().map(|s| s.unit);
        put(
            m.preamble.as_ref(),
            "direct meter",
            format!("table {:#x}, unit {unit:?}", m.direct_table_id),
        );
    }
    // Type specs (registers, digests, value-set fields) and selector group
    // limits are left out: the same program has several P4Info forms of
    // them (p4c's may differ from ours), and what a client writes is
    // checked against ours anyway.
    for r in &p.registers {
        put(r.preamble.as_ref(), "register", format!("size {}", r.size));
    }
    for a in &p.action_profiles {
        let mut tables = a.table_ids.clone();
        tables.sort_unstable();
        put(
            a.preamble.as_ref(),
            "action profile",
            format!(
                "tables {tables:x?}, selector {}, size {}",
                a.with_selector, a.size
            ),
        );
    }
    for d in &p.digests {
        put(d.preamble.as_ref(), "digest", String::new());
    }
    for v in &p.value_sets {
        put(v.preamble.as_ref(), "value set", format!("size {}", v.size));
    }
    for h in &p.controller_packet_metadata {
        let fields: Vec<_> = h.metadata.iter().map(|m| (m.id, m.bitwidth)).collect();
        put(
            h.preamble.as_ref(),
            "controller header",
            format!("fields {fields:?}"),
        );
    }
    out
}

/// INVALID_ARGUMENT naming every difference, or Ok.
pub fn verify(
    program: &str,
    ours: &p4info::P4Info,
    theirs: &p4info::P4Info,
) -> Result<(), P4Error> {
    check_platform(theirs)?;
    let diffs = differences(ours, theirs);
    if diffs.is_empty() {
        return Ok(());
    }
    let shown: Vec<_> = diffs.iter().take(10).cloned().collect();
    let more = diffs.len().saturating_sub(shown.len());
    Err(P4Error::invalid(
        "config.p4info",
        format!(
            "not the program '{program}' ({} difference(s)): {}{}; to load another program, send its bundle (p4-to-rust build) as p4_device_config",
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

/// What RECONCILE_AND_COMMIT carries from one program to the next: the
/// tables and action profiles that exist unchanged in both (same id and
/// name; for a table, the same match fields, the same actions with the
/// same params, the same implementation).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unchanged {
    /// Table ids.
    pub tables: Vec<u32>,
    /// Action profile ids.
    pub profiles: Vec<u32>,
}

/// The tables and profiles unchanged between `old` and `new`.
pub fn unchanged(old: &p4info::P4Info, new: &p4info::P4Info) -> Unchanged {
    let (oa, na) = (actions(old), actions(new));
    let (ot, nt) = (tables(old), tables(new));
    let table_of = |p: &p4info::P4Info, id: u32| {
        p.tables
            .iter()
            .find(|t| t.preamble.as_ref().is_some_and(|pre| pre.id == id))
            .map(|t| {
                let refs: Vec<u32> = t.action_refs.iter().map(|r| r.id).collect();
                (refs, t.implementation_id)
            })
    };
    let profile_of = |p: &p4info::P4Info, id: u32| {
        p.action_profiles
            .iter()
            .find(|a| a.preamble.as_ref().is_some_and(|pre| pre.id == id))
            .map(|a| {
                (
                    a.preamble.as_ref().map(|pre| pre.name.clone()),
                    a.table_ids.clone(),
                    a.with_selector,
                )
            })
    };
    let mut out = Unchanged::default();
    for (id, shape) in &ot {
        if nt.get(id) != Some(shape) {
            continue;
        }
        let (Some((refs, imp)), Some(n)) = (table_of(old, *id), table_of(new, *id)) else {
            continue;
        };
        if (refs.clone(), imp) != n || refs.iter().any(|a| oa.get(a) != na.get(a)) {
            continue;
        }
        out.tables.push(*id);
    }
    for p in &old.action_profiles {
        let Some(id) = p.preamble.as_ref().map(|pre| pre.id) else {
            continue;
        };
        if profile_of(old, id) == profile_of(new, id) {
            out.profiles.push(id);
        }
    }
    // A table behind a changed profile cannot keep its entries.
    out.tables.retain(|t| {
        table_of(old, *t).is_none_or(|(_, imp)| imp == 0 || out.profiles.contains(&imp))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = r#"
tables { preamble { id: 1 name: "ing.route" } match_fields { id: 1 name: "dst" bitwidth: 32 match_type: LPM } action_refs { id: 10 } size: 64 }
tables { preamble { id: 2 name: "ing.acl" } match_fields { id: 1 name: "src" bitwidth: 32 match_type: EXACT } action_refs { id: 11 } size: 64 }
tables { preamble { id: 3 name: "ing.ecmp" } match_fields { id: 1 name: "h" bitwidth: 16 match_type: EXACT } action_refs { id: 10 } implementation_id: 50 size: 64 }
actions { preamble { id: 10 name: "ing.fwd" } params { id: 1 name: "port" bitwidth: 9 } }
actions { preamble { id: 11 name: "ing.deny" } }
action_profiles { preamble { id: 50 name: "ing.sel" } table_ids: 3 with_selector: true size: 64 }
"#;

    #[test]
    fn reconcile_keeps_only_tables_unchanged_with_their_actions_and_profiles() {
        let old = proto::p4info_from_text(OLD).unwrap();
        assert_eq!(
            unchanged(&old, &old),
            Unchanged {
                tables: vec![1, 2, 3],
                profiles: vec![50]
            }
        );
        // acl's action gains a param; route's key widens; the profile loses its selector.
        let new = proto::p4info_from_text(
            &OLD.replace(
                r#"actions { preamble { id: 11 name: "ing.deny" } }"#,
                r#"actions { preamble { id: 11 name: "ing.deny" } params { id: 1 name: "why" bitwidth: 8 } }"#,
            )
            .replace("bitwidth: 32 match_type: LPM", "bitwidth: 128 match_type: LPM")
            .replace("with_selector: true", "with_selector: false"),
        )
        .unwrap();
        assert_eq!(unchanged(&old, &new), Unchanged::default());
        // Only acl changes: route and ecmp (with its profile) stay.
        let new = proto::p4info_from_text(&OLD.replace("ing.acl", "ing.acl2")).unwrap();
        assert_eq!(
            unchanged(&old, &new),
            Unchanged {
                tables: vec![1, 3],
                profiles: vec![50]
            }
        );
    }
}
