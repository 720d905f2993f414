//! Translation between P4Runtime messages and the runtime's native forms,
//! with the strict validation the spec asks for (reference §1.3–1.4):
//! unknown table/action/param/field ids, duplicate field or param ids,
//! wrong number of params, actions not in the table or used outside their
//! scope, values wider than their field, masks on exact fields, LPM
//! prefixes longer than the field or with bits past the prefix, ternary
//! values outside their mask, missing or superfluous priorities.
//!
//! Every error is INVALID_ARGUMENT, except an action used outside its
//! `@tableonly`/`@defaultonly` scope (PERMISSION_DENIED, §9.1.2), and its
//! message starts with the field path (`match[1] (hdr.ipv4.dstAddr)`,
//! `action.params[0]`, `priority`).
//! Values come out canonical (native integers), and go back out as
//! canonical byte strings.

use p4_target::info::{ActionInfo, ActionScope, MatchKind, ProgramInfo, TableInfo};
use p4_target::runtime::{ActionCall, EntryAction, FieldMatch, TableEntry};
use proto::p4::v1 as pb;
use proto::p4::v1::field_match::FieldMatchType;

use super::bytes::{decode, encode, mask};
use super::error::P4Error;

/// `match[i] (name)`: the path of a match field in error messages.
struct MatchPath {
    i: usize,
    name: &'static str,
}

impl std::fmt::Display for MatchPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "match[{}] ({})", self.i, self.name)
    }
}

/// Looks up a table by id; `field` names the id field in errors.
pub fn table(
    info: &'static ProgramInfo,
    id: u32,
    field: &str,
) -> Result<&'static TableInfo, P4Error> {
    info.table(id)
        .ok_or_else(|| P4Error::invalid(field, format!("unknown table id {id:#x}")))
}

/// Whether entries of `t` carry a priority (ternary, range or optional key).
pub fn needs_priority(t: &TableInfo) -> bool {
    t.keys.iter().any(|k| {
        matches!(
            k.kind,
            MatchKind::Ternary | MatchKind::Range | MatchKind::Optional
        )
    })
}

/// Checks `priority` against the table's key kinds.
pub fn check_priority(t: &TableInfo, priority: i32) -> Result<(), P4Error> {
    if needs_priority(t) {
        if priority <= 0 {
            return Err(P4Error::invalid(
                "priority",
                format!(
                    "{} has a ternary/range/optional key and needs a priority > 0",
                    t.name
                ),
            ));
        }
    } else if priority != 0 {
        return Err(P4Error::invalid(
            "priority",
            format!(
                "{} has only exact/LPM keys and takes no priority (got {priority})",
                t.name
            ),
        ));
    }
    Ok(())
}

/// Decodes an entry's match list into one item per key field, in key order
/// (`None` = don't care). Exact fields must be present; don't-care
/// ternary/LPM/range values must be omitted rather than sent as wildcards.
pub fn key_from_proto(
    t: &TableInfo,
    matches: &[pb::FieldMatch],
) -> Result<Vec<Option<FieldMatch>>, P4Error> {
    let mut key: Vec<Option<FieldMatch>> = vec![None; t.keys.len()];
    for (i, m) in matches.iter().enumerate() {
        let Some(ki) = t.keys.iter().position(|k| k.id == m.field_id) else {
            return Err(P4Error::invalid(
                format!("match[{i}].field_id"),
                format!("unknown match field id {} in {}", m.field_id, t.name),
            ));
        };
        let k = &t.keys[ki];
        // Formatted only into an error message (this runs per update).
        let field = MatchPath { i, name: k.name };
        if key[ki].is_some() {
            return Err(P4Error::invalid(
                &field,
                format!("duplicate match field id {}", m.field_id),
            ));
        }
        let w = k.bitwidth;
        let fm = match (&m.field_match_type, k.kind) {
            (Some(FieldMatchType::Exact(e)), MatchKind::Exact) => {
                FieldMatch::Exact(decode(&e.value, w, format_args!("{field}.exact.value"))?)
            }
            (Some(FieldMatchType::Lpm(l)), MatchKind::Lpm) => {
                let value = decode(&l.value, w, format_args!("{field}.lpm.value"))?;
                if l.prefix_len <= 0 || l.prefix_len as u32 > w {
                    return Err(P4Error::invalid(
                        format!("{field}.lpm.prefix_len"),
                        format!(
                            "prefix length {} outside 1..={w} (omit the field for a don't-care)",
                            l.prefix_len
                        ),
                    ));
                }
                let plen = l.prefix_len as u32;
                let host_bits = mask(w - plen);
                if value & host_bits != 0 {
                    return Err(P4Error::invalid(
                        format!("{field}.lpm.value"),
                        format!("value {value:#x} has bits set past the /{plen} prefix"),
                    ));
                }
                FieldMatch::Lpm {
                    value,
                    prefix_len: plen,
                }
            }
            (Some(FieldMatchType::Ternary(tm)), MatchKind::Ternary) => {
                let value = decode(&tm.value, w, format_args!("{field}.ternary.value"))?;
                let mask_v = decode(&tm.mask, w, format_args!("{field}.ternary.mask"))?;
                if mask_v == 0 {
                    return Err(P4Error::invalid(
                        format!("{field}.ternary.mask"),
                        "all-zero mask (omit the field for a don't-care)",
                    ));
                }
                if value & !mask_v != 0 {
                    return Err(P4Error::invalid(
                        format!("{field}.ternary.value"),
                        format!("value {value:#x} has bits outside the mask {mask_v:#x}"),
                    ));
                }
                FieldMatch::Ternary {
                    value,
                    mask: mask_v,
                }
            }
            (Some(FieldMatchType::Range(r)), MatchKind::Range) => {
                let low = decode(&r.low, w, format_args!("{field}.range.low"))?;
                let high = decode(&r.high, w, format_args!("{field}.range.high"))?;
                if low > high {
                    return Err(P4Error::invalid(
                        format!("{field}.range"),
                        format!("low {low:#x} is above high {high:#x}"),
                    ));
                }
                if low == 0 && high == mask(w) {
                    return Err(P4Error::invalid(
                        format!("{field}.range"),
                        "full range (omit the field for a don't-care)",
                    ));
                }
                FieldMatch::Range { low, high }
            }
            (Some(FieldMatchType::Optional(o)), MatchKind::Optional) => {
                FieldMatch::Optional(decode(&o.value, w, format_args!("{field}.optional.value"))?)
            }
            (None, _) => return Err(P4Error::invalid(&field, "no match value")),
            (Some(other), kind) => {
                let got = match other {
                    FieldMatchType::Exact(_) => "exact",
                    FieldMatchType::Ternary(_) => "ternary (value + mask)",
                    FieldMatchType::Lpm(_) => "lpm",
                    FieldMatchType::Range(_) => "range",
                    FieldMatchType::Optional(_) => "optional",
                    FieldMatchType::Other(_) => "other",
                };
                return Err(P4Error::invalid(
                    &field,
                    format!("{got} match given for a {kind:?} field"),
                ));
            }
        };
        key[ki] = Some(fm);
    }
    for (k, v) in t.keys.iter().zip(&key) {
        if v.is_none() && k.kind == MatchKind::Exact {
            return Err(P4Error::invalid(
                format!("match ({})", k.name),
                "exact field is missing (exact fields cannot be don't-care)",
            ));
        }
    }
    Ok(key)
}

/// The match list of a runtime entry, for replies (wildcards omitted).
pub fn key_to_proto(t: &TableInfo, key: &[Option<FieldMatch>]) -> Vec<pb::FieldMatch> {
    t.keys
        .iter()
        .zip(key)
        .filter_map(|(k, m)| {
            let ty = match (*m)? {
                FieldMatch::Exact(v) => {
                    FieldMatchType::Exact(pb::field_match::Exact { value: encode(v) })
                }
                FieldMatch::Lpm { value, prefix_len } => {
                    FieldMatchType::Lpm(pb::field_match::Lpm {
                        value: encode(value),
                        prefix_len: prefix_len as i32,
                    })
                }
                FieldMatch::Ternary { value, mask } => {
                    FieldMatchType::Ternary(pb::field_match::Ternary {
                        value: encode(value),
                        mask: encode(mask),
                    })
                }
                FieldMatch::Range { low, high } => FieldMatchType::Range(pb::field_match::Range {
                    low: encode(low),
                    high: encode(high),
                }),
                FieldMatch::Optional(v) => {
                    FieldMatchType::Optional(pb::field_match::Optional { value: encode(v) })
                }
            };
            Some(pb::FieldMatch {
                field_id: k.id,
                field_match_type: Some(ty),
            })
        })
        .collect()
}

/// Decodes an action call: the action must exist and every parameter must
/// be given exactly once and fit its width. `field` is the path prefix.
pub fn action_call_from_proto(
    info: &'static ProgramInfo,
    a: &pb::Action,
    field: &str,
) -> Result<ActionCall, P4Error> {
    let Some(ai) = info.action(a.action_id) else {
        return Err(P4Error::invalid(
            format!("{field}.action_id"),
            format!("unknown action id {:#x}", a.action_id),
        ));
    };
    if a.params.len() != ai.params.len() {
        return Err(P4Error::invalid(
            format!("{field}.params"),
            format!(
                "{} takes {} params, got {}",
                ai.name,
                ai.params.len(),
                a.params.len()
            ),
        ));
    }
    // Built at its final size (one allocation an update, no shrink); a
    // duplicate id is found among the params before it, a handful at most.
    let mut values = vec![0u128; ai.params.len()].into_boxed_slice();
    for (i, p) in a.params.iter().enumerate() {
        let Some(pi) = ai.params.iter().position(|q| q.id == p.param_id) else {
            return Err(P4Error::invalid(
                format!("{field}.params[{i}].param_id"),
                format!("unknown param id {} of {}", p.param_id, ai.name),
            ));
        };
        let pinfo = &ai.params[pi];
        if a.params[..i].iter().any(|q| q.param_id == p.param_id) {
            return Err(P4Error::invalid(
                format!("{field}.params[{i}].param_id"),
                format!("duplicate param id {} ({})", p.param_id, pinfo.name),
            ));
        }
        values[pi] = decode(
            &p.value,
            pinfo.bitwidth,
            format_args!("{field}.params[{i}] ({}).value", pinfo.name),
        )?;
    }
    Ok(ActionCall {
        action_id: ai.id,
        params: values,
    })
}

/// An action call as a P4Runtime `Action`.
pub fn action_call_to_proto(info: &ProgramInfo, call: &ActionCall) -> pb::Action {
    let params = info
        .action(call.action_id)
        .map(|ai: &ActionInfo| {
            ai.params
                .iter()
                .zip(call.params.iter())
                .map(|(p, &v)| pb::action::Param {
                    param_id: p.id,
                    value: encode(v),
                })
                .collect()
        })
        .unwrap_or_default();
    pb::Action {
        action_id: call.action_id,
        params,
    }
}

/// Checks that `action_id` is one of `t`'s actions and allowed where it is
/// used (`default` = as the default action).
pub fn check_action_in_table(
    t: &TableInfo,
    action_id: u32,
    default: bool,
    field: &str,
) -> Result<(), P4Error> {
    let Some(r) = t.actions.iter().find(|r| r.id == action_id) else {
        return Err(P4Error::invalid(
            field,
            format!("action {action_id:#x} is not an action of {}", t.name),
        ));
    };
    // A valid action used outside its scope is PERMISSION_DENIED (§9.1.2).
    match (r.scope, default) {
        (ActionScope::DefaultOnly, false) => Err(P4Error::new(
            tonic::Code::PermissionDenied,
            format!(
                "{field}: action {action_id:#x} is @defaultonly in {}",
                t.name
            ),
        )),
        (ActionScope::TableOnly, true) => Err(P4Error::new(
            tonic::Code::PermissionDenied,
            format!("{field}: action {action_id:#x} is @tableonly in {}", t.name),
        )),
        _ => Ok(()),
    }
}

/// Decodes what a (non-default) entry of `t` runs.
pub fn entry_action_from_proto(
    info: &'static ProgramInfo,
    t: &TableInfo,
    action: Option<&pb::TableAction>,
) -> Result<EntryAction, P4Error> {
    use pb::table_action::Type;
    let Some(ty) = action.and_then(|a| a.r#type.as_ref()) else {
        return Err(P4Error::invalid("action", "missing"));
    };
    let selector = t
        .implementation
        .and_then(|p| info.action_profiles.iter().find(|ap| ap.id == p))
        .map(|ap| ap.selector.is_some());
    match (ty, selector) {
        (Type::Action(a), None) => {
            check_action_in_table(t, a.action_id, false, "action.action_id")?;
            Ok(EntryAction::Direct(action_call_from_proto(
                info, a, "action",
            )?))
        }
        (Type::ActionProfileMemberId(m), Some(_)) => Ok(EntryAction::Member(*m)),
        (Type::ActionProfileGroupId(g), Some(true)) => Ok(EntryAction::Group(*g)),
        (Type::ActionProfileGroupId(_), Some(false)) => Err(P4Error::invalid(
            "action.action_profile_group_id",
            format!(
                "{} uses an action profile without selector: no groups",
                t.name
            ),
        )),
        (Type::Action(_), Some(_)) => Err(P4Error::invalid(
            "action.action",
            format!("{} is indirect: give a member or group id", t.name),
        )),
        (Type::ActionProfileMemberId(_) | Type::ActionProfileGroupId(_), None) => {
            Err(P4Error::invalid(
                "action",
                format!("{} is a direct table: give an action", t.name),
            ))
        }
        (Type::ActionProfileActionSet(_), _) => Err(P4Error::unimplemented(
            "action.action_profile_action_set (one-shot)",
        )),
    }
}

/// A runtime entry as a P4Runtime `TableEntry`.
pub fn entry_to_proto(info: &ProgramInfo, t: &TableInfo, e: &TableEntry) -> pb::TableEntry {
    use pb::table_action::Type;
    let ty = match &e.action {
        EntryAction::Direct(c) => Type::Action(action_call_to_proto(info, c)),
        EntryAction::Member(m) => Type::ActionProfileMemberId(*m),
        EntryAction::Group(g) => Type::ActionProfileGroupId(*g),
    };
    pb::TableEntry {
        table_id: t.id,
        r#match: key_to_proto(t, &e.matches),
        action: Some(pb::TableAction { r#type: Some(ty) }),
        priority: e.priority,
        metadata: e.metadata.clone(),
        is_const: t.is_const,
        ..Default::default()
    }
}

/// The default entry of `t` as a P4Runtime `TableEntry`.
pub fn default_entry_to_proto(
    info: &ProgramInfo,
    t: &TableInfo,
    call: &ActionCall,
) -> pb::TableEntry {
    pb::TableEntry {
        table_id: t.id,
        action: Some(pb::TableAction {
            r#type: Some(pb::table_action::Type::Action(action_call_to_proto(
                info, call,
            ))),
        }),
        is_default_action: true,
        // An indirect table's default entry is constant (§9.1.3).
        is_const: t.default_is_const || t.implementation.is_some(),
        ..Default::default()
    }
}
