//! Writes the checker's owned [`ProgramInfo`] as a Rust `static` initialiser.
//!
//! Contract: the output is a constant expression of type
//! `::p4_target::info::ProgramInfo` that reproduces `info` field for field
//! (the generated program's `PROGRAM_INFO`), except `p4info_text`, which the
//! caller supplies, and the layout, which is not P4Info. Deterministic: slices are written in their order.

use crate::ir::info::{
    ActionScope, CounterUnit, HashAlgorithm, MatchKind, MetaFieldInfo, ProgramInfo,
};
use p4_target::runtime::FieldMatch;
use std::fmt::Write;

const P: &str = "::p4_target::info::";

fn opt_u32(v: Option<u32>) -> String {
    match v {
        Some(x) => format!("Some({x:#x})"),
        None => "None".into(),
    }
}

fn unit(u: CounterUnit) -> String {
    let n = match u {
        CounterUnit::Bytes => "Bytes",
        CounterUnit::Packets => "Packets",
        CounterUnit::Both => "Both",
    };
    format!("{P}CounterUnit::{n}")
}

/// Rust path of a hash algorithm variant.
pub fn algo(a: HashAlgorithm) -> String {
    let n = match a {
        HashAlgorithm::Crc32 => "Crc32",
        HashAlgorithm::Crc32Custom => "Crc32Custom",
        HashAlgorithm::Crc16 => "Crc16",
        HashAlgorithm::Crc16Custom => "Crc16Custom",
        HashAlgorithm::Random => "Random",
        HashAlgorithm::Identity => "Identity",
        HashAlgorithm::Csum16 => "Csum16",
        HashAlgorithm::Xor16 => "Xor16",
    };
    format!("{P}HashAlgorithm::{n}")
}

fn kind(k: MatchKind) -> String {
    let n = match k {
        MatchKind::Exact => "Exact",
        MatchKind::Lpm => "Lpm",
        MatchKind::Ternary => "Ternary",
        MatchKind::Range => "Range",
        MatchKind::Optional => "Optional",
    };
    format!("{P}MatchKind::{n}")
}

fn field_match(m: &Option<FieldMatch>) -> String {
    const R: &str = "::p4_target::runtime::FieldMatch::";
    match m {
        None => "None".into(),
        Some(FieldMatch::Exact(v)) => format!("Some({R}Exact({v:#x}))"),
        Some(FieldMatch::Optional(v)) => format!("Some({R}Optional({v:#x}))"),
        Some(FieldMatch::Lpm { value, prefix_len }) => {
            format!("Some({R}Lpm {{ value: {value:#x}, prefix_len: {prefix_len} }})")
        }
        Some(FieldMatch::Ternary { value, mask }) => {
            format!("Some({R}Ternary {{ value: {value:#x}, mask: {mask:#x} }})")
        }
        Some(FieldMatch::Range { low, high }) => {
            format!("Some({R}Range {{ low: {low:#x}, high: {high:#x} }})")
        }
    }
}

fn u128s(v: &[u128]) -> String {
    let items: Vec<String> = v.iter().map(|x| format!("{x:#x}")).collect();
    format!("&[{}]", items.join(", "))
}

fn meta_fields(fields: &[MetaFieldInfo]) -> String {
    let mut s = String::from("&[");
    for f in fields {
        let _ = write!(
            s,
            "{P}MetaFieldInfo {{ id: {}, name: {:?}, bitwidth: {}, signed: {} }}, ",
            f.id, f.name, f.bitwidth, f.signed
        );
    }
    s.push(']');
    s
}

/// The initialiser expression for `info`, with `p4info_text` given as a
/// Rust expression.
pub fn program_info_expr(info: &ProgramInfo, p4info_text_expr: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{P}ProgramInfo {{");
    let _ = writeln!(s, "    name: {:?},", info.name);
    let _ = writeln!(s, "    arch: {:?},", info.arch);
    s.push_str("    tables: &[\n");
    for t in &info.tables {
        let _ = writeln!(s, "        {P}TableInfo {{");
        let _ = writeln!(s, "            id: {:#x},", t.id);
        let _ = writeln!(s, "            name: {:?},", t.name);
        s.push_str("            keys: &[\n");
        for k in &t.keys {
            let _ = writeln!(
                s,
                "                {P}KeyInfo {{ id: {}, name: {:?}, bitwidth: {}, kind: {} }},",
                k.id,
                k.name,
                k.bitwidth,
                kind(k.kind)
            );
        }
        s.push_str("            ],\n");
        s.push_str("            actions: &[\n");
        for a in &t.actions {
            let scope = match a.scope {
                ActionScope::TableAndDefault => "TableAndDefault",
                ActionScope::TableOnly => "TableOnly",
                ActionScope::DefaultOnly => "DefaultOnly",
            };
            let _ = writeln!(
                s,
                "                {P}ActionRef {{ id: {:#x}, scope: {P}ActionScope::{scope} }},",
                a.id
            );
        }
        s.push_str("            ],\n");
        let _ = writeln!(s, "            size: {},", t.size);
        let _ = writeln!(
            s,
            "            implementation: {},",
            opt_u32(t.implementation)
        );
        let _ = writeln!(
            s,
            "            default_action: ({:#x}, {}),",
            t.default_action.0,
            u128s(&t.default_action.1)
        );
        let _ = writeln!(s, "            default_is_const: {},", t.default_is_const);
        let _ = writeln!(s, "            is_const: {},", t.is_const);
        s.push_str("            const_entries: &[\n");
        for e in &t.const_entries {
            let ms: Vec<String> = e.matches.iter().map(field_match).collect();
            let _ = writeln!(
                s,
                "                {P}ConstEntryInfo {{ matches: &[{}], priority: {}, action_id: {:#x}, params: {} }},",
                ms.join(", "),
                e.priority,
                e.action_id,
                u128s(&e.params)
            );
        }
        s.push_str("            ],\n");
        let _ = writeln!(
            s,
            "            direct_counter: {},",
            opt_u32(t.direct_counter)
        );
        let _ = writeln!(s, "            direct_meter: {},", opt_u32(t.direct_meter));
        let _ = writeln!(s, "            idle_timeout: {},", t.idle_timeout);
        s.push_str("        },\n");
    }
    s.push_str("    ],\n    actions: &[\n");
    for a in &info.actions {
        let _ = write!(
            s,
            "        {P}ActionInfo {{ id: {:#x}, name: {:?}, params: &[",
            a.id, a.name
        );
        for p in &a.params {
            let _ = write!(
                s,
                "{P}ParamInfo {{ id: {}, name: {:?}, bitwidth: {} }}, ",
                p.id, p.name, p.bitwidth
            );
        }
        s.push_str("] },\n");
    }
    s.push_str("    ],\n    action_profiles: &[\n");
    for p in &info.action_profiles {
        let sel = match p.selector {
            Some((a, w)) => format!("Some(({}, {w}))", algo(a)),
            None => "None".into(),
        };
        let ids: Vec<String> = p.table_ids.iter().map(|i| format!("{i:#x}")).collect();
        let _ = writeln!(
            s,
            "        {P}ActionProfileInfo {{ id: {:#x}, name: {:?}, table_ids: &[{}], selector: {sel}, size: {} }},",
            p.id,
            p.name,
            ids.join(", "),
            p.size
        );
    }
    s.push_str("    ],\n    counters: &[\n");
    for c in &info.counters {
        let _ = writeln!(
            s,
            "        {P}CounterInfo {{ id: {:#x}, name: {:?}, unit: {}, size: {}, direct_table: {} }},",
            c.id,
            c.name,
            unit(c.unit),
            c.size,
            opt_u32(c.direct_table)
        );
    }
    s.push_str("    ],\n    meters: &[\n");
    for c in &info.meters {
        let _ = writeln!(
            s,
            "        {P}MeterInfo {{ id: {:#x}, name: {:?}, unit: {}, size: {}, direct_table: {} }},",
            c.id,
            c.name,
            unit(c.unit),
            c.size,
            opt_u32(c.direct_table)
        );
    }
    s.push_str("    ],\n    registers: &[\n");
    for r in &info.registers {
        let _ = writeln!(
            s,
            "        {P}RegisterInfo {{ id: {:#x}, name: {:?}, bitwidth: {}, signed: {}, size: {} }},",
            r.id, r.name, r.bitwidth, r.signed, r.size
        );
    }
    s.push_str("    ],\n    digests: &[\n");
    for d in &info.digests {
        let _ = writeln!(
            s,
            "        {P}DigestInfo {{ id: {:#x}, name: {:?}, fields: {}, scalar: {} }},",
            d.id,
            d.name,
            meta_fields(&d.fields),
            d.scalar
        );
    }
    s.push_str("    ],\n    controller_headers: &[\n");
    for d in &info.controller_headers {
        let _ = writeln!(
            s,
            "        {P}ControllerHeaderInfo {{ id: {:#x}, name: {:?}, fields: {} }},",
            d.id,
            d.name,
            meta_fields(&d.fields)
        );
    }
    s.push_str("    ],\n    value_sets: &[\n");
    for v in &info.value_sets {
        let _ = writeln!(
            s,
            "        {P}ValueSetInfo {{ id: {:#x}, name: {:?}, bitwidth: {}, size: {}, fields: {} }},",
            v.id,
            v.name,
            v.bitwidth,
            v.size,
            meta_fields(&v.fields)
        );
    }
    let _ = writeln!(s, "    ],\n    p4info_text: {p4info_text_expr},");
    s.push('}');
    s
}
