//! P4Info output: the program's control-plane description in protobuf text
//! format (as `p4c --p4runtime-files x.p4info.txtpb` writes it) and in the
//! binary protobuf encoding of the same message.
//!
//! Input: a [`ProgramInfo`] (ids already assigned, see `proc::ids`); its
//! `p4info_text` field is ignored, since this module is what produces it.
//! Output: [`p4info_text`] and [`p4info_binary`], built from one
//! intermediate message tree so the two can never disagree.
//!
//! Contract and conventions (P4Runtime spec §6 "P4Info", `p4info.proto` of
//! p4lang/p4runtime; field numbers in `reference/p4runtime-subset.md` §1.3):
//! - Fields are emitted in field-number order, and proto3 defaults (0,
//!   `false`, `""`, enum value 0) are omitted, as protobuf's own printers
//!   and serializers do.
//! - `alias` is the shortest dotted suffix of the name that is unique among
//!   all names in the P4Info (p4c's `shortestUniqueSuffix`).
//! - Action references carry `@tableonly` / `@defaultonly` both as an
//!   annotation and as the `scope` enum, as p4c writes them. Other source
//!   annotations are not part of [`ProgramInfo`] and so are not emitted.
//! - Digests refer to their struct by name; the struct's layout goes into
//!   `type_info.structs`.
//! - Pure, allocation only; never panics.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::ir::info::{ActionScope, ControllerHeaderInfo, CounterUnit, MatchKind, ProgramInfo};

/// The P4Info in protobuf text format.
pub fn p4info_text(info: &ProgramInfo) -> String {
    let mut out = String::from(
        "# proto-file: p4/config/v1/p4info.proto\n# proto-message: p4.config.v1.P4Info\n\n",
    );
    write_text(&mut out, &build(info), 0);
    out
}

/// The P4Info in protobuf binary encoding.
pub fn p4info_binary(info: &ProgramInfo) -> Vec<u8> {
    let mut out = Vec::new();
    write_binary(&mut out, &build(info));
    out
}

/// For each name, the shortest suffix of whole dotted components that no
/// other name in `names` shares (duplicates count once).
pub fn shortest_unique_suffixes(names: &[&str]) -> Vec<String> {
    let mut unique: Vec<&str> = names.to_vec();
    unique.sort_unstable();
    unique.dedup();
    let split: Vec<Vec<&str>> = unique
        .iter()
        .map(|n| n.split('.').rev().collect())
        .collect();
    names
        .iter()
        .map(|name| {
            let comps: Vec<&str> = name.split('.').rev().collect();
            let mut needed = comps.len();
            for k in 1..=comps.len() {
                let sharing = split
                    .iter()
                    .filter(|other| other.len() >= k && other[..k] == comps[..k])
                    .count();
                if sharing < 2 {
                    needed = k;
                    break;
                }
            }
            let mut parts: Vec<&str> = comps[..needed].to_vec();
            parts.reverse();
            parts.join(".")
        })
        .collect()
}

// ---------------------------------------------------------------------------
// The message tree
// ---------------------------------------------------------------------------

/// A field value. Defaults are never stored (see [`Msg`]'s setters).
#[derive(Clone, Debug, PartialEq)]
enum Value {
    Varint(u64),
    Bool(bool),
    Str(String),
    /// An enum: its text name and wire number.
    Enum(&'static str, u64),
    Msg(Msg),
}

/// A message: its fields in field-number order.
#[derive(Clone, Debug, Default, PartialEq)]
struct Msg {
    fields: Vec<(&'static str, u32, Value)>,
}

impl Msg {
    fn uint(mut self, name: &'static str, number: u32, v: u64) -> Self {
        if v != 0 {
            self.fields.push((name, number, Value::Varint(v)));
        }
        self
    }

    fn flag(mut self, name: &'static str, number: u32, v: bool) -> Self {
        if v {
            self.fields.push((name, number, Value::Bool(true)));
        }
        self
    }

    fn string(mut self, name: &'static str, number: u32, v: &str) -> Self {
        if !v.is_empty() {
            self.fields.push((name, number, Value::Str(v.to_owned())));
        }
        self
    }

    fn enumeration(mut self, name: &'static str, number: u32, text: &'static str, v: u64) -> Self {
        if v != 0 {
            self.fields.push((name, number, Value::Enum(text, v)));
        }
        self
    }

    /// A sub-message; always present once set (even when empty).
    fn msg(mut self, name: &'static str, number: u32, m: Msg) -> Self {
        self.fields.push((name, number, Value::Msg(m)));
        self
    }
}

fn preamble(
    id: u32,
    name: &str,
    aliases: &BTreeMap<String, String>,
    annotations: &[String],
) -> Msg {
    let mut m = Msg::default()
        .uint("id", 1, id.into())
        .string("name", 2, name)
        .string("alias", 3, aliases.get(name).map_or(name, String::as_str));
    for a in annotations {
        m = m.string("annotations", 4, a);
    }
    m
}

/// A `P4DataTypeSpec` holding a `P4BitstringLikeTypeSpec`: `bit` (1) or,
/// for `int<W>`, `int` (2).
fn bitstring(bitwidth: u32, signed: bool) -> Msg {
    let (kind, number) = if signed { ("int", 2) } else { ("bit", 1) };
    Msg::default().msg(
        "bitstring",
        1,
        Msg::default().msg(
            kind,
            number,
            Msg::default().uint("bitwidth", 1, bitwidth.into()),
        ),
    )
}

fn counter_unit(u: CounterUnit) -> (&'static str, u64) {
    match u {
        CounterUnit::Bytes => ("BYTES", 1),
        CounterUnit::Packets => ("PACKETS", 2),
        CounterUnit::Both => ("BOTH", 3),
    }
}

fn controller_header_annotation(h: &ControllerHeaderInfo) -> String {
    format!("@controller_header(\"{}\")", h.name)
}

/// Builds the `P4Info` message.
fn build(info: &ProgramInfo) -> Msg {
    // Aliases are computed over every name in the P4Info, as p4c does.
    let mut all: Vec<&str> = Vec::new();
    all.extend(info.tables.iter().map(|t| t.name.as_str()));
    all.extend(info.actions.iter().map(|a| a.name.as_str()));
    all.extend(info.action_profiles.iter().map(|a| a.name.as_str()));
    all.extend(info.counters.iter().map(|c| c.name.as_str()));
    all.extend(info.meters.iter().map(|m| m.name.as_str()));
    all.extend(info.registers.iter().map(|r| r.name.as_str()));
    all.extend(info.digests.iter().map(|d| d.name.as_str()));
    all.extend(info.controller_headers.iter().map(|h| h.name.as_str()));
    all.extend(info.value_sets.iter().map(|v| v.name.as_str()));
    let aliases: BTreeMap<String, String> = all
        .iter()
        .zip(shortest_unique_suffixes(&all))
        .map(|(n, a)| ((*n).to_owned(), a))
        .collect();

    let mut p4info =
        Msg::default().msg("pkg_info", 1, Msg::default().string("arch", 5, &info.arch));

    for t in &info.tables {
        let mut m = Msg::default().msg("preamble", 1, preamble(t.id, &t.name, &aliases, &[]));
        for k in &t.keys {
            let (kind, num) = match k.kind {
                MatchKind::Exact => ("EXACT", 2),
                MatchKind::Lpm => ("LPM", 3),
                MatchKind::Ternary => ("TERNARY", 4),
                MatchKind::Range => ("RANGE", 5),
                MatchKind::Optional => ("OPTIONAL", 6),
            };
            m = m.msg(
                "match_fields",
                2,
                Msg::default()
                    .uint("id", 1, k.id.into())
                    .string("name", 2, &k.name)
                    .uint("bitwidth", 4, k.bitwidth.into())
                    .enumeration("match_type", 5, kind, num),
            );
        }
        for a in &t.actions {
            let (annotation, scope, num) = match a.scope {
                ActionScope::TableAndDefault => ("", "TABLE_AND_DEFAULT", 0),
                ActionScope::TableOnly => ("@tableonly", "TABLE_ONLY", 1),
                ActionScope::DefaultOnly => ("@defaultonly", "DEFAULT_ONLY", 2),
            };
            m = m.msg(
                "action_refs",
                3,
                Msg::default()
                    .uint("id", 1, a.id.into())
                    .string("annotations", 2, annotation)
                    .enumeration("scope", 3, scope, num),
            );
        }
        if t.default_is_const {
            m = m.uint("const_default_action_id", 4, t.default_action.0.into());
        }
        if let Some(p) = t.implementation {
            m = m.uint("implementation_id", 6, p.into());
        }
        for id in [t.direct_counter, t.direct_meter].into_iter().flatten() {
            m = m.uint("direct_resource_ids", 7, id.into());
        }
        m = m.uint("size", 8, t.size.into());
        if t.idle_timeout {
            m = m.enumeration("idle_timeout_behavior", 9, "NOTIFY_CONTROL", 1);
        }
        m = m.flag("is_const_table", 10, t.is_const).flag(
            "has_initial_entries",
            11,
            !t.const_entries.is_empty(),
        );
        p4info = p4info.msg("tables", 2, m);
    }

    for a in &info.actions {
        let mut m = Msg::default().msg("preamble", 1, preamble(a.id, &a.name, &aliases, &[]));
        for p in &a.params {
            m = m.msg(
                "params",
                2,
                Msg::default()
                    .uint("id", 1, p.id.into())
                    .string("name", 2, &p.name)
                    .uint("bitwidth", 4, p.bitwidth.into()),
            );
        }
        p4info = p4info.msg("actions", 3, m);
    }

    for ap in &info.action_profiles {
        let mut m = Msg::default().msg("preamble", 1, preamble(ap.id, &ap.name, &aliases, &[]));
        for t in &ap.table_ids {
            m = m.uint("table_ids", 2, (*t).into());
        }
        m = m
            .flag("with_selector", 3, ap.selector.is_some())
            .uint("size", 4, ap.size.into());
        p4info = p4info.msg("action_profiles", 4, m);
    }

    for c in info.counters.iter().filter(|c| c.direct_table.is_none()) {
        let (unit, num) = counter_unit(c.unit);
        let m = Msg::default()
            .msg("preamble", 1, preamble(c.id, &c.name, &aliases, &[]))
            .msg("spec", 2, Msg::default().enumeration("unit", 1, unit, num))
            .uint("size", 3, c.size.into());
        p4info = p4info.msg("counters", 5, m);
    }
    for c in info.counters.iter() {
        let Some(table) = c.direct_table else {
            continue;
        };
        let (unit, num) = counter_unit(c.unit);
        let m = Msg::default()
            .msg("preamble", 1, preamble(c.id, &c.name, &aliases, &[]))
            .msg("spec", 2, Msg::default().enumeration("unit", 1, unit, num))
            .uint("direct_table_id", 3, table.into());
        p4info = p4info.msg("direct_counters", 6, m);
    }
    for mt in info.meters.iter().filter(|m| m.direct_table.is_none()) {
        let (unit, num) = counter_unit(mt.unit);
        let m = Msg::default()
            .msg("preamble", 1, preamble(mt.id, &mt.name, &aliases, &[]))
            .msg("spec", 2, Msg::default().enumeration("unit", 1, unit, num))
            .uint("size", 3, mt.size.into());
        p4info = p4info.msg("meters", 7, m);
    }
    for mt in info.meters.iter() {
        let Some(table) = mt.direct_table else {
            continue;
        };
        let (unit, num) = counter_unit(mt.unit);
        let m = Msg::default()
            .msg("preamble", 1, preamble(mt.id, &mt.name, &aliases, &[]))
            .msg("spec", 2, Msg::default().enumeration("unit", 1, unit, num))
            .uint("direct_table_id", 3, table.into());
        p4info = p4info.msg("direct_meters", 8, m);
    }

    for h in &info.controller_headers {
        let mut m = Msg::default().msg(
            "preamble",
            1,
            preamble(h.id, &h.name, &aliases, &[controller_header_annotation(h)]),
        );
        for f in &h.fields {
            m = m.msg(
                "metadata",
                2,
                Msg::default()
                    .uint("id", 1, f.id.into())
                    .string("name", 2, &f.name)
                    .uint("bitwidth", 4, f.bitwidth.into()),
            );
        }
        p4info = p4info.msg("controller_packet_metadata", 9, m);
    }

    for v in &info.value_sets {
        let mut m = Msg::default().msg("preamble", 1, preamble(v.id, &v.name, &aliases, &[]));
        if v.fields.is_empty() {
            m = m.msg(
                "match",
                2,
                Msg::default()
                    .uint("id", 1, 1)
                    .uint("bitwidth", 4, v.bitwidth.into())
                    .enumeration("match_type", 5, "EXACT", 2),
            );
        }
        // A struct element: one match field per member, as p4c writes it.
        for f in &v.fields {
            m = m.msg(
                "match",
                2,
                Msg::default()
                    .uint("id", 1, f.id.into())
                    .string("name", 2, &f.name)
                    .uint("bitwidth", 4, f.bitwidth.into())
                    .enumeration("match_type", 5, "EXACT", 2),
            );
        }
        m = m.uint("size", 3, v.size.into());
        p4info = p4info.msg("value_sets", 10, m);
    }

    for r in &info.registers {
        let m = Msg::default()
            .msg("preamble", 1, preamble(r.id, &r.name, &aliases, &[]))
            .msg("type_spec", 2, bitstring(r.bitwidth, r.signed))
            .uint("size", 3, r.size.into());
        p4info = p4info.msg("registers", 11, m);
    }

    let mut structs = Msg::default();
    for d in &info.digests {
        if d.scalar {
            // A bit string: described in place, no type_info entry.
            let (w, signed) = d
                .fields
                .first()
                .map_or((0, false), |f| (f.bitwidth, f.signed));
            let m = Msg::default()
                .msg("preamble", 1, preamble(d.id, &d.name, &aliases, &[]))
                .msg("type_spec", 2, bitstring(w, signed));
            p4info = p4info.msg("digests", 12, m);
            continue;
        }
        let m = Msg::default()
            .msg("preamble", 1, preamble(d.id, &d.name, &aliases, &[]))
            .msg(
                "type_spec",
                2,
                Msg::default().msg("struct", 4, Msg::default().string("name", 1, &d.name)),
            );
        p4info = p4info.msg("digests", 12, m);
        let mut spec = Msg::default();
        for f in &d.fields {
            spec = spec.msg(
                "members",
                1,
                Msg::default().string("name", 1, &f.name).msg(
                    "type_spec",
                    2,
                    bitstring(f.bitwidth, f.signed),
                ),
            );
        }
        // A map entry: key = 1, value = 2.
        structs = structs.msg(
            "structs",
            1,
            Msg::default()
                .string("key", 1, &d.name)
                .msg("value", 2, spec),
        );
    }
    p4info.msg("type_info", 200, structs)
}

// ---------------------------------------------------------------------------
// Printers
// ---------------------------------------------------------------------------

/// Text format, two-space indent, as protobuf's `TextFormat::Print`.
fn write_text(out: &mut String, m: &Msg, indent: usize) {
    for (name, _, value) in &m.fields {
        let pad = "  ".repeat(indent);
        match value {
            Value::Varint(v) => {
                let _ = writeln!(out, "{pad}{name}: {v}");
            }
            Value::Bool(b) => {
                let _ = writeln!(out, "{pad}{name}: {b}");
            }
            Value::Str(s) => {
                let _ = writeln!(out, "{pad}{name}: \"{}\"", escape(s));
            }
            Value::Enum(text, _) => {
                let _ = writeln!(out, "{pad}{name}: {text}");
            }
            Value::Msg(sub) => {
                let _ = writeln!(out, "{pad}{name} {{");
                write_text(out, sub, indent + 1);
                let _ = writeln!(out, "{pad}}}");
            }
        }
    }
}

/// C-style escaping as protobuf's text printer does (bytes outside
/// printable ASCII become three-digit octal escapes).
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        match b {
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            b'"' => out.push_str("\\\""),
            b'\'' => out.push_str("\\'"),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => {
                let _ = write!(out, "\\{b:03o}");
            }
        }
    }
    out
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn key(out: &mut Vec<u8>, number: u32, wire_type: u8) {
    varint(out, u64::from(number) << 3 | u64::from(wire_type));
}

/// Binary encoding: varints (wire type 0) and length-delimited (2).
fn write_binary(out: &mut Vec<u8>, m: &Msg) {
    for (_, number, value) in &m.fields {
        match value {
            Value::Varint(v) | Value::Enum(_, v) => {
                key(out, *number, 0);
                varint(out, *v);
            }
            Value::Bool(b) => {
                key(out, *number, 0);
                varint(out, u64::from(*b));
            }
            Value::Str(s) => {
                key(out, *number, 2);
                varint(out, s.len() as u64);
                out.extend_from_slice(s.as_bytes());
            }
            Value::Msg(sub) => {
                let mut body = Vec::new();
                write_binary(&mut body, sub);
                key(out, *number, 2);
                varint(out, body.len() as u64);
                out.extend_from_slice(&body);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use p4_target::info::{
        ActionInfo, ActionProfileInfo, ActionRef, ActionScope, ControllerHeaderInfo, CounterInfo,
        CounterUnit, DigestInfo, HashAlgorithm, KeyInfo, MatchKind, MetaFieldInfo, MeterInfo,
        ParamInfo, ProgramInfo, RegisterInfo, TableInfo, ValueSetInfo,
    };

    // The fixtures are target descriptions (static, as generated code has
    // them); the generator reads the checker's owned form.
    fn p4info_text(info: &ProgramInfo) -> String {
        super::p4info_text(&info.into())
    }

    fn p4info_binary(info: &ProgramInfo) -> Vec<u8> {
        super::p4info_binary(&info.into())
    }

    static KEYS: [KeyInfo; 1] = [KeyInfo {
        id: 1,
        name: "hdr.ipv4.dstAddr",
        bitwidth: 32,
        kind: MatchKind::Lpm,
    }];
    static REFS: [ActionRef; 2] = [
        ActionRef {
            id: 0x0100_0002,
            scope: ActionScope::TableAndDefault,
        },
        ActionRef {
            id: 0x0100_0001,
            scope: ActionScope::DefaultOnly,
        },
    ];
    static PARAMS: [ParamInfo; 1] = [ParamInfo {
        id: 1,
        name: "port",
        bitwidth: 9,
    }];
    static ACTIONS: [ActionInfo; 2] = [
        ActionInfo {
            id: 0x0100_0001,
            name: "NoAction",
            params: &[],
        },
        ActionInfo {
            id: 0x0100_0002,
            name: "MyIngress.fwd",
            params: &PARAMS,
        },
    ];
    static TABLES: [TableInfo; 1] = [TableInfo {
        id: 0x0200_0001,
        name: "MyIngress.ipv4_lpm",
        keys: &KEYS,
        actions: &REFS,
        size: 1024,
        implementation: None,
        default_action: (0x0100_0001, &[]),
        default_is_const: true,
        is_const: false,
        const_entries: &[],
        direct_counter: Some(0x1300_0001),
        direct_meter: None,
        idle_timeout: false,
    }];
    static COUNTERS: [CounterInfo; 2] = [
        CounterInfo {
            id: 0x1200_0001,
            name: "MyIngress.port_pkts",
            unit: CounterUnit::Packets,
            size: 512,
            direct_table: None,
        },
        CounterInfo {
            id: 0x1300_0001,
            name: "MyIngress.hits",
            unit: CounterUnit::Both,
            size: 0,
            direct_table: Some(0x0200_0001),
        },
    ];
    static REGISTERS: [RegisterInfo; 1] = [RegisterInfo {
        id: 0x1600_0001,
        name: "MyEgress.ipv4_lpm",
        bitwidth: 32,
        signed: false,
        size: 16,
    }];
    static PIN_FIELDS: [MetaFieldInfo; 1] = [MetaFieldInfo {
        id: 1,
        name: "ingress_port",
        bitwidth: 9,
        signed: false,
    }];
    static HEADERS: [ControllerHeaderInfo; 1] = [ControllerHeaderInfo {
        id: 0x0400_0001,
        name: "packet_in",
        fields: &PIN_FIELDS,
    }];
    static DIGEST_FIELDS: [MetaFieldInfo; 2] = [
        MetaFieldInfo {
            id: 1,
            name: "src",
            bitwidth: 48,
            signed: false,
        },
        MetaFieldInfo {
            id: 2,
            name: "port",
            bitwidth: 9,
            signed: false,
        },
    ];
    static DIGESTS: [DigestInfo; 1] = [DigestInfo {
        id: 0x1700_0001,
        name: "learn_t",
        fields: &DIGEST_FIELDS,
        scalar: false,
    }];
    static PROFILE_TABLES: [u32; 1] = [0x0200_0001];
    static PROFILES: [ActionProfileInfo; 1] = [ActionProfileInfo {
        id: 0x1100_0001,
        name: "MyIngress.sel",
        table_ids: &PROFILE_TABLES,
        selector: Some((HashAlgorithm::Crc16, 14)),
        size: 1024,
    }];
    static VALUE_SETS: [ValueSetInfo; 1] = [ValueSetInfo {
        id: 0x0300_0001,
        name: "MyParser.ports",
        bitwidth: 9,
        size: 4,
        fields: &[],
    }];
    static METERS: [MeterInfo; 1] = [MeterInfo {
        id: 0x1400_0001,
        name: "MyIngress.m",
        unit: CounterUnit::Bytes,
        size: 8,
        direct_table: None,
    }];

    fn program() -> ProgramInfo {
        ProgramInfo {
            name: "t",
            arch: "v1model",
            tables: &TABLES,
            actions: &ACTIONS,
            action_profiles: &PROFILES,
            counters: &COUNTERS,
            meters: &METERS,
            registers: &REGISTERS,
            digests: &DIGESTS,
            controller_headers: &HEADERS,
            value_sets: &VALUE_SETS,
            p4info_text: "",
        }
    }

    #[test]
    fn text_format_is_pinned() {
        let expected = r#"# proto-file: p4/config/v1/p4info.proto
# proto-message: p4.config.v1.P4Info

pkg_info {
  arch: "v1model"
}
tables {
  preamble {
    id: 33554433
    name: "MyIngress.ipv4_lpm"
    alias: "MyIngress.ipv4_lpm"
  }
  match_fields {
    id: 1
    name: "hdr.ipv4.dstAddr"
    bitwidth: 32
    match_type: LPM
  }
  action_refs {
    id: 16777218
  }
  action_refs {
    id: 16777217
    annotations: "@defaultonly"
    scope: DEFAULT_ONLY
  }
  const_default_action_id: 16777217
  direct_resource_ids: 318767105
  size: 1024
}
actions {
  preamble {
    id: 16777217
    name: "NoAction"
    alias: "NoAction"
  }
}
actions {
  preamble {
    id: 16777218
    name: "MyIngress.fwd"
    alias: "fwd"
  }
  params {
    id: 1
    name: "port"
    bitwidth: 9
  }
}
action_profiles {
  preamble {
    id: 285212673
    name: "MyIngress.sel"
    alias: "sel"
  }
  table_ids: 33554433
  with_selector: true
  size: 1024
}
counters {
  preamble {
    id: 301989889
    name: "MyIngress.port_pkts"
    alias: "port_pkts"
  }
  spec {
    unit: PACKETS
  }
  size: 512
}
direct_counters {
  preamble {
    id: 318767105
    name: "MyIngress.hits"
    alias: "hits"
  }
  spec {
    unit: BOTH
  }
  direct_table_id: 33554433
}
meters {
  preamble {
    id: 335544321
    name: "MyIngress.m"
    alias: "m"
  }
  spec {
    unit: BYTES
  }
  size: 8
}
controller_packet_metadata {
  preamble {
    id: 67108865
    name: "packet_in"
    alias: "packet_in"
    annotations: "@controller_header(\"packet_in\")"
  }
  metadata {
    id: 1
    name: "ingress_port"
    bitwidth: 9
  }
}
value_sets {
  preamble {
    id: 50331649
    name: "MyParser.ports"
    alias: "ports"
  }
  match {
    id: 1
    bitwidth: 9
    match_type: EXACT
  }
  size: 4
}
registers {
  preamble {
    id: 369098753
    name: "MyEgress.ipv4_lpm"
    alias: "MyEgress.ipv4_lpm"
  }
  type_spec {
    bitstring {
      bit {
        bitwidth: 32
      }
    }
  }
  size: 16
}
digests {
  preamble {
    id: 385875969
    name: "learn_t"
    alias: "learn_t"
  }
  type_spec {
    struct {
      name: "learn_t"
    }
  }
}
type_info {
  structs {
    key: "learn_t"
    value {
      members {
        name: "src"
        type_spec {
          bitstring {
            bit {
              bitwidth: 48
            }
          }
        }
      }
      members {
        name: "port"
        type_spec {
          bitstring {
            bit {
              bitwidth: 9
            }
          }
        }
      }
    }
  }
}
"#;
        assert_eq!(p4info_text(&program()), expected);
    }

    #[test]
    fn binary_encoding_matches_hand_computed_bytes() {
        static A: [ActionInfo; 1] = [ActionInfo {
            id: 0x0100_0001,
            name: "a",
            params: &PARAMS,
        }];
        let info = ProgramInfo {
            name: "t",
            arch: "v1model",
            tables: &[],
            actions: &A,
            action_profiles: &[],
            counters: &[],
            meters: &[],
            registers: &[],
            digests: &[],
            controller_headers: &[],
            value_sets: &[],
            p4info_text: "",
        };
        #[rustfmt::skip]
        let expected: Vec<u8> = vec![
            // pkg_info (1) { arch (5): "v1model" }
            0x0a, 0x09, 0x2a, 0x07, b'v', b'1', b'm', b'o', b'd', b'e', b'l',
            // actions (3), 25 bytes
            0x1a, 0x19,
              // preamble (1), 11 bytes: id (1) = 0x01000001 as varint, name (2) "a", alias (3) "a"
              0x0a, 0x0b, 0x08, 0x81, 0x80, 0x80, 0x08, 0x12, 0x01, b'a', 0x1a, 0x01, b'a',
              // params (2), 10 bytes: id 1, name "port", bitwidth (4) 9
              0x12, 0x0a, 0x08, 0x01, 0x12, 0x04, b'p', b'o', b'r', b't', 0x20, 0x09,
            // type_info (200): key 200<<3|2 = 1602 = 0xc2 0x0c, empty
            0xc2, 0x0c, 0x00,
        ];
        assert_eq!(p4info_binary(&info), expected);
    }

    #[test]
    fn binary_and_text_describe_the_same_fields() {
        // Every top-level text block has one length-delimited field in the
        // binary, in the same order.
        let info = program();
        let bin = p4info_binary(&info);
        let mut numbers = Vec::new();
        let mut i = 0;
        while i < bin.len() {
            let mut k = 0u64;
            let mut shift = 0;
            loop {
                let b = bin[i];
                i += 1;
                k |= u64::from(b & 0x7f) << shift;
                shift += 7;
                if b < 0x80 {
                    break;
                }
            }
            assert_eq!(k & 7, 2, "top-level fields are messages");
            let mut len = 0u64;
            let mut shift = 0;
            loop {
                let b = bin[i];
                i += 1;
                len |= u64::from(b & 0x7f) << shift;
                shift += 7;
                if b < 0x80 {
                    break;
                }
            }
            numbers.push(k >> 3);
            i += len as usize;
        }
        assert_eq!(i, bin.len());
        assert_eq!(numbers, [1, 2, 3, 3, 4, 5, 6, 7, 9, 10, 11, 12, 200]);
        let text = p4info_text(&info);
        let top: Vec<&str> = text
            .lines()
            .filter(|l| l.ends_with(" {") && !l.starts_with(' '))
            .collect();
        assert_eq!(top.len(), numbers.len());
    }

    #[test]
    fn signed_cells_are_int_and_struct_value_sets_have_a_field_per_member() {
        static SIGNED: [RegisterInfo; 1] = [RegisterInfo {
            id: 0x1600_0002,
            name: "acc",
            bitwidth: 8,
            signed: true,
            size: 4,
        }];
        static FIELDS: [MetaFieldInfo; 2] = [
            MetaFieldInfo {
                id: 1,
                name: "kind",
                bitwidth: 8,
                signed: false,
            },
            MetaFieldInfo {
                id: 2,
                name: "inner.delta",
                bitwidth: 4,
                signed: true,
            },
        ];
        static DIGESTS: [DigestInfo; 1] = [DigestInfo {
            id: 0x1700_0001,
            name: "pair_t",
            fields: &FIELDS,
            scalar: false,
        }];
        static SETS: [ValueSetInfo; 1] = [ValueSetInfo {
            id: 0x0300_0001,
            name: "P.special",
            bitwidth: 12,
            size: 4,
            fields: &FIELDS,
        }];
        let info = ProgramInfo {
            registers: &SIGNED,
            digests: &DIGESTS,
            value_sets: &SETS,
            ..program()
        };
        let text = p4info_text(&info);
        let register = &text[text.find("registers {").unwrap()..];
        assert!(
            register.contains("type_spec {\n    bitstring {\n      int {\n        bitwidth: 8\n"),
            "{register}"
        );
        let set = &text[text.find("value_sets {").unwrap()..text.find("registers {").unwrap()];
        assert!(
            set.contains("match {\n    id: 1\n    name: \"kind\"\n    bitwidth: 8\n    match_type: EXACT\n  }\n  match {\n    id: 2\n    name: \"inner.delta\"\n    bitwidth: 4\n"),
            "{set}"
        );
        let types = &text[text.find("type_info {").unwrap()..];
        assert!(types.contains("name: \"inner.delta\"\n        type_spec {\n          bitstring {\n            int {"), "{types}");
        assert!(
            types.contains(
                "name: \"kind\"\n        type_spec {\n          bitstring {\n            bit {"
            ),
            "{types}"
        );
    }

    #[test]
    fn aliases_are_shortest_unique_dotted_suffixes() {
        let names = [
            "d.a.c",
            "e.b.c",
            "x.y",
            "y",
            "NoAction",
            "a.NoAction2",
            "p.q.r",
            "s.q.r",
        ];
        assert_eq!(
            shortest_unique_suffixes(&names),
            [
                "a.c",
                "b.c",
                "x.y",
                "y",
                "NoAction",
                "NoAction2",
                "p.q.r",
                "s.q.r"
            ]
        );
        assert_eq!(shortest_unique_suffixes(&["a.b", "a.b"]), ["b", "b"]);
    }

    #[test]
    fn strings_are_escaped_like_protobuf() {
        assert_eq!(escape("a\"b\\c\n"), "a\\\"b\\\\c\\n");
        assert_eq!(escape("é"), "\\303\\251");
    }
}
