//! Validation and canonical form of table entries and actions against the
//! static [`TableInfo`] / [`ProgramInfo`] (P4Runtime specification, sections
//! "TableEntry" — match kinds, priorities, action scopes — and "Bytestrings"
//! for widths).
//!
//! Contract: every check returns a [`RuntimeError::Invalid`] whose `field`
//! names the offender the way P4Runtime error messages quote it
//! (`match[1] (hdr.ipv4.dstAddr)`, `action.params[0] (port)`, `priority`).
//! Nothing here mutates state, so callers validate first and then commit.
//!
//! Canonical form (so that the entry store keys one behaviour by one key):
//! don't-care matches become `None` — an LPM with `prefix_len` 0, a ternary
//! with mask 0, a range covering the whole field. P4Runtime asks clients to
//! omit such fields; we accept both spellings and store the omitted one.

use crate::bits::mask;
use crate::info::{ActionScope, MatchKind, ProgramInfo, TableInfo};
use crate::runtime::{ActionCall, EntryAction, FieldMatch, RuntimeError};

fn invalid(field: impl Into<String>, reason: impl Into<String>) -> RuntimeError {
    RuntimeError::Invalid {
        field: field.into(),
        reason: reason.into(),
    }
}

/// Whether entries of this table carry a priority (a ternary, range or optional key).
pub(crate) fn needs_priority(info: &TableInfo) -> bool {
    info.keys.iter().any(|k| {
        matches!(
            k.kind,
            MatchKind::Ternary | MatchKind::Range | MatchKind::Optional
        )
    })
}

/// Checks the match list and returns its canonical form.
pub(crate) fn canonical_matches(
    info: &TableInfo,
    matches: &[Option<FieldMatch>],
) -> Result<Box<[Option<FieldMatch>]>, RuntimeError> {
    if info.keys.is_empty() && !matches.is_empty() {
        return Err(invalid("match", format!("table {} has no key", info.name)));
    }
    if matches.len() != info.keys.len() {
        return Err(invalid(
            "match",
            format!("expected {} fields, got {}", info.keys.len(), matches.len()),
        ));
    }
    let mut out = Vec::with_capacity(matches.len());
    for (i, (key, fm)) in info.keys.iter().zip(matches).enumerate() {
        let field = || format!("match[{i}] ({})", key.name);
        let w = key.bitwidth;
        let m = mask(w);
        let fits = |v: u128, what: &str| {
            if v & !m != 0 {
                Err(invalid(
                    field(),
                    format!("{what} {v:#x} does not fit in {w} bits"),
                ))
            } else {
                Ok(())
            }
        };
        let Some(fm) = fm else {
            if key.kind == MatchKind::Exact {
                return Err(invalid(field(), "an exact field cannot be a wildcard"));
            }
            out.push(None);
            continue;
        };
        if fm.kind() != key.kind {
            return Err(invalid(
                field(),
                format!("expected a {:?} match, got {:?}", key.kind, fm.kind()),
            ));
        }
        let canonical = match *fm {
            FieldMatch::Exact(v) | FieldMatch::Optional(v) => {
                fits(v, "value")?;
                Some(*fm)
            }
            FieldMatch::Lpm { value, prefix_len } => {
                if prefix_len > w {
                    return Err(invalid(
                        field(),
                        format!("prefix_len {prefix_len} exceeds the width {w}"),
                    ));
                }
                fits(value, "value")?;
                if value & mask(w - prefix_len) != 0 {
                    return Err(invalid(
                        field(),
                        format!("value {value:#x} has bits set past the /{prefix_len} prefix"),
                    ));
                }
                (prefix_len > 0).then_some(*fm)
            }
            FieldMatch::Ternary { value, mask: tmask } => {
                fits(value, "value")?;
                fits(tmask, "mask")?;
                if value & !tmask != 0 {
                    return Err(invalid(
                        field(),
                        format!("value {value:#x} has bits outside the mask {tmask:#x}"),
                    ));
                }
                (tmask != 0).then_some(*fm)
            }
            FieldMatch::Range { low, high } => {
                fits(low, "low")?;
                fits(high, "high")?;
                if low > high {
                    return Err(invalid(field(), format!("low {low:#x} > high {high:#x}")));
                }
                (!(low == 0 && high == m)).then_some(*fm)
            }
        };
        out.push(canonical);
    }
    Ok(out.into_boxed_slice())
}

/// Checks the priority rule: > 0 iff the table has ternary/range/optional keys.
pub(crate) fn check_priority(info: &TableInfo, priority: i32) -> Result<(), RuntimeError> {
    if needs_priority(info) {
        if priority <= 0 {
            return Err(invalid(
                "priority",
                format!(
                    "must be > 0 in {} (it has ternary, range or optional keys), got {priority}",
                    info.name
                ),
            ));
        }
    } else if priority != 0 {
        return Err(invalid(
            "priority",
            format!(
                "must be 0 in {} (only exact and lpm keys), got {priority}",
                info.name
            ),
        ));
    }
    Ok(())
}

/// Checks an action call's parameters against the program's action info.
/// `field` prefixes the names (`action`, `default_action`, `member.action`).
pub(crate) fn check_params(
    program: Option<&ProgramInfo>,
    call: &ActionCall,
    field: &str,
) -> Result<(), RuntimeError> {
    let Some(program) = program else {
        return Ok(());
    };
    let Some(action) = program.action(call.action_id) else {
        return Err(RuntimeError::UnknownId {
            kind: "action",
            id: call.action_id,
        });
    };
    if call.params.len() != action.params.len() {
        return Err(invalid(
            format!("{field}.params"),
            format!(
                "{} takes {} parameters, got {}",
                action.name,
                action.params.len(),
                call.params.len()
            ),
        ));
    }
    for (i, (p, &v)) in action.params.iter().zip(call.params.iter()).enumerate() {
        if v & !mask(p.bitwidth) != 0 {
            return Err(invalid(
                format!("{field}.params[{i}] ({})", p.name),
                format!("value {v:#x} does not fit in {} bits", p.bitwidth),
            ));
        }
    }
    Ok(())
}

/// Checks that `action_id` may run in `table` in the given role.
pub(crate) fn check_action_scope(
    info: &TableInfo,
    action_id: u32,
    as_default: bool,
    field: &str,
) -> Result<(), RuntimeError> {
    let Some(aref) = info.actions.iter().find(|a| a.id == action_id) else {
        return Err(invalid(
            format!("{field}.action_id"),
            format!("action {action_id:#x} is not an action of {}", info.name),
        ));
    };
    match (aref.scope, as_default) {
        (ActionScope::DefaultOnly, false) => Err(invalid(
            format!("{field}.action_id"),
            format!("action {action_id:#x} is @defaultonly in {}", info.name),
        )),
        (ActionScope::TableOnly, true) => Err(invalid(
            format!("{field}.action_id"),
            format!("action {action_id:#x} is @tableonly in {}", info.name),
        )),
        _ => Ok(()),
    }
}

/// Checks what an entry runs (not whether a referenced member or group exists:
/// that is the action profile's business).
pub(crate) fn check_entry_action(
    info: &TableInfo,
    program: Option<&ProgramInfo>,
    action: &EntryAction,
) -> Result<(), RuntimeError> {
    match action {
        EntryAction::Direct(call) => {
            if info.implementation.is_some() {
                return Err(invalid(
                    "action",
                    format!(
                        "{} is implemented by an action profile: entries point at a member or group",
                        info.name
                    ),
                ));
            }
            check_action_scope(info, call.action_id, false, "action")?;
            check_params(program, call, "action")
        }
        EntryAction::Member(_) | EntryAction::Group(_) => {
            if info.implementation.is_none() {
                return Err(invalid(
                    "action",
                    format!(
                        "{} has no action profile: entries run an action directly",
                        info.name
                    ),
                ));
            }
            Ok(())
        }
    }
}

/// Checks a default action for `table`.
pub(crate) fn check_default_action(
    info: &TableInfo,
    program: Option<&ProgramInfo>,
    call: &ActionCall,
) -> Result<(), RuntimeError> {
    check_action_scope(info, call.action_id, true, "default_action")?;
    check_params(program, call, "default_action")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::info::{ActionRef, KeyInfo};
    use crate::table::fixtures;

    static KEYS: [KeyInfo; 4] = [
        KeyInfo {
            id: 1,
            name: "hdr.ipv4.dstAddr",
            bitwidth: 32,
            kind: MatchKind::Ternary,
        },
        KeyInfo {
            id: 2,
            name: "port",
            bitwidth: 9,
            kind: MatchKind::Exact,
        },
        KeyInfo {
            id: 3,
            name: "sport",
            bitwidth: 16,
            kind: MatchKind::Range,
        },
        KeyInfo {
            id: 4,
            name: "pfx",
            bitwidth: 8,
            kind: MatchKind::Lpm,
        },
    ];
    static ACTIONS: [ActionRef; 2] = [
        ActionRef {
            id: 1,
            scope: ActionScope::TableOnly,
        },
        ActionRef {
            id: 2,
            scope: ActionScope::DefaultOnly,
        },
    ];
    static T: TableInfo = TableInfo {
        actions: &ACTIONS,
        default_action: (2, &[]),
        ..fixtures::table(1, "acl", &KEYS, 4)
    };

    fn field_of(e: RuntimeError) -> String {
        match e {
            RuntimeError::Invalid { field, .. } => field,
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn errors_name_the_field() {
        let ok = [
            Some(FieldMatch::Ternary {
                value: 0x0a00_0000,
                mask: 0xff00_0000,
            }),
            Some(FieldMatch::Exact(3)),
            Some(FieldMatch::Range { low: 10, high: 20 }),
            Some(FieldMatch::Lpm {
                value: 0x80,
                prefix_len: 1,
            }),
        ];
        assert!(canonical_matches(&T, &ok).is_ok());
        let mut bad = ok;
        bad[0] = Some(FieldMatch::Ternary {
            value: 0x0a00_0001,
            mask: 0xff00_0000,
        });
        assert_eq!(
            field_of(canonical_matches(&T, &bad).unwrap_err()),
            "match[0] (hdr.ipv4.dstAddr)"
        );
        let mut bad = ok;
        bad[1] = Some(FieldMatch::Exact(512));
        assert_eq!(
            field_of(canonical_matches(&T, &bad).unwrap_err()),
            "match[1] (port)"
        );
        let mut bad = ok;
        bad[1] = None;
        assert_eq!(
            field_of(canonical_matches(&T, &bad).unwrap_err()),
            "match[1] (port)"
        );
        let mut bad = ok;
        bad[2] = Some(FieldMatch::Range { low: 21, high: 20 });
        assert_eq!(
            field_of(canonical_matches(&T, &bad).unwrap_err()),
            "match[2] (sport)"
        );
        let mut bad = ok;
        bad[3] = Some(FieldMatch::Lpm {
            value: 0x81,
            prefix_len: 1,
        });
        assert_eq!(
            field_of(canonical_matches(&T, &bad).unwrap_err()),
            "match[3] (pfx)"
        );
        bad[3] = Some(FieldMatch::Lpm {
            value: 0,
            prefix_len: 9,
        });
        assert_eq!(
            field_of(canonical_matches(&T, &bad).unwrap_err()),
            "match[3] (pfx)"
        );
        let mut bad = ok;
        bad[3] = Some(FieldMatch::Exact(1));
        assert_eq!(
            field_of(canonical_matches(&T, &bad).unwrap_err()),
            "match[3] (pfx)"
        );
        assert_eq!(
            field_of(canonical_matches(&T, &ok[..3]).unwrap_err()),
            "match"
        );
        assert_eq!(field_of(check_priority(&T, 0).unwrap_err()), "priority");
        assert!(check_priority(&T, 1).is_ok());
    }

    #[test]
    fn dont_care_matches_become_wildcards() {
        let m = [
            Some(FieldMatch::Ternary { value: 0, mask: 0 }),
            Some(FieldMatch::Exact(3)),
            Some(FieldMatch::Range {
                low: 0,
                high: 0xffff,
            }),
            Some(FieldMatch::Lpm {
                value: 0,
                prefix_len: 0,
            }),
        ];
        let c = canonical_matches(&T, &m).unwrap();
        assert_eq!(&*c, &[None, Some(FieldMatch::Exact(3)), None, None]);
    }

    #[test]
    fn action_scopes_are_enforced() {
        let call = |id| EntryAction::Direct(ActionCall::new(id, &[]));
        assert!(check_entry_action(&T, None, &call(1)).is_ok());
        assert_eq!(
            field_of(check_entry_action(&T, None, &call(2)).unwrap_err()),
            "action.action_id"
        );
        assert_eq!(
            field_of(check_entry_action(&T, None, &call(9)).unwrap_err()),
            "action.action_id"
        );
        assert!(check_default_action(&T, None, &ActionCall::new(2, &[])).is_ok());
        assert_eq!(
            field_of(check_default_action(&T, None, &ActionCall::new(1, &[])).unwrap_err()),
            "default_action.action_id"
        );
        assert_eq!(
            field_of(check_entry_action(&T, None, &EntryAction::Member(1)).unwrap_err()),
            "action"
        );
    }
}
