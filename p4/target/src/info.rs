//! Static description of a compiled program: the P4Info facts the runtime
//! needs (IDs, names, widths, match kinds), emitted by the code generator as
//! `static` data so that building a [`crate::runtime::Runtime`] allocates only
//! the tables themselves.
//!
//! IDs follow P4Runtime (`p4info.proto`, `P4Ids.Prefix`): the top byte is the
//! object kind, see [`id_prefix`]. Names are the fully qualified P4Info names
//! (`MyIngress.ipv4_lpm`).

/// P4Runtime ID prefixes (top 8 bits of every P4Info ID).
pub mod id_prefix {
    /// Actions.
    pub const ACTION: u8 = 0x01;
    /// Tables.
    pub const TABLE: u8 = 0x02;
    /// Parser value sets.
    pub const VALUE_SET: u8 = 0x03;
    /// `@controller_header` headers.
    pub const CONTROLLER_HEADER: u8 = 0x04;
    /// Action profiles and selectors.
    pub const ACTION_PROFILE: u8 = 0x11;
    /// Indirect counters.
    pub const COUNTER: u8 = 0x12;
    /// Direct counters.
    pub const DIRECT_COUNTER: u8 = 0x13;
    /// Indirect meters.
    pub const METER: u8 = 0x14;
    /// Direct meters.
    pub const DIRECT_METER: u8 = 0x15;
    /// Registers.
    pub const REGISTER: u8 = 0x16;
    /// Digests.
    pub const DIGEST: u8 = 0x17;
}

/// How a key field is matched (P4Info `MatchField.MatchType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatchKind {
    /// Value must equal.
    Exact,
    /// Longest prefix wins.
    Lpm,
    /// Value under mask; entries ordered by priority.
    Ternary,
    /// Inclusive `low..=high`.
    Range,
    /// Exact or wildcard.
    Optional,
}

/// One key field of a table.
#[derive(Clone, Copy, Debug)]
pub struct KeyInfo {
    /// P4Info match field id (1-based, in key order unless `@id`).
    pub id: u32,
    /// P4Info name: the key expression as written (`hdr.ipv4.dstAddr`) or its `@name`.
    pub name: &'static str,
    /// Width in bits (1..=128).
    pub bitwidth: u32,
    /// Match kind.
    pub kind: MatchKind,
}

/// Where an action may be used in a table (`@tableonly`, `@defaultonly`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActionScope {
    /// Entries and default.
    TableAndDefault,
    /// `@tableonly`.
    TableOnly,
    /// `@defaultonly`.
    DefaultOnly,
}

/// An action a table may run.
#[derive(Clone, Copy, Debug)]
pub struct ActionRef {
    /// Action id.
    pub id: u32,
    /// Scope annotation.
    pub scope: ActionScope,
}

/// One action parameter (action data, set by the control plane).
#[derive(Clone, Copy, Debug)]
pub struct ParamInfo {
    /// Param id (1-based in declaration order).
    pub id: u32,
    /// Name.
    pub name: &'static str,
    /// Width in bits.
    pub bitwidth: u32,
}

/// An action.
#[derive(Clone, Copy, Debug)]
pub struct ActionInfo {
    /// Action id.
    pub id: u32,
    /// Fully qualified name.
    pub name: &'static str,
    /// Control-plane parameters, in order.
    pub params: &'static [ParamInfo],
}

/// A `const entries` / initial entry, in runtime form.
#[derive(Clone, Copy, Debug)]
pub struct ConstEntryInfo {
    /// One item per key field, in key order; `None` is a wildcard (`_`/`default`).
    pub matches: &'static [Option<crate::runtime::FieldMatch>],
    /// Priority, higher wins (already converted from source order / `@priority`).
    pub priority: i32,
    /// Action id.
    pub action_id: u32,
    /// Action arguments.
    pub params: &'static [u128],
}

/// A table.
#[derive(Clone, Copy, Debug)]
pub struct TableInfo {
    /// Table id.
    pub id: u32,
    /// Fully qualified name.
    pub name: &'static str,
    /// Key fields in order.
    pub keys: &'static [KeyInfo],
    /// Actions the table may run.
    pub actions: &'static [ActionRef],
    /// Declared `size` (or 1024, p4c's default).
    pub size: u32,
    /// Action profile or selector id when `implementation = ...`.
    pub implementation: Option<u32>,
    /// Default action at start: action id and arguments.
    pub default_action: (u32, &'static [u128]),
    /// `const default_action`: the control plane may not change it.
    pub default_is_const: bool,
    /// `const entries`: the control plane may not add or remove entries.
    pub is_const: bool,
    /// Entries present at start (`const entries` or `entries`).
    pub const_entries: &'static [ConstEntryInfo],
    /// Direct counter id attached by `counters = ...`.
    pub direct_counter: Option<u32>,
    /// Direct meter id attached by `meters = ...`.
    pub direct_meter: Option<u32>,
    /// Whether the table has `support_timeout = true`.
    pub idle_timeout: bool,
}

impl TableInfo {
    /// A table with nothing but its keys, actions, size and changeable
    /// default action: no implementation, const entries, direct counter or
    /// meter, or idle timeout. Hand-written descriptions (tests, benches)
    /// start from it and spell out only what differs:
    /// `TableInfo { idle_timeout: true, ..TableInfo::plain(..) }`.
    pub const fn plain(
        id: u32,
        name: &'static str,
        keys: &'static [KeyInfo],
        actions: &'static [ActionRef],
        size: u32,
        default_action: (u32, &'static [u128]),
    ) -> TableInfo {
        TableInfo {
            id,
            name,
            keys,
            actions,
            size,
            implementation: None,
            default_action,
            default_is_const: false,
            is_const: false,
            const_entries: &[],
            direct_counter: None,
            direct_meter: None,
            idle_timeout: false,
        }
    }
}

/// Hash algorithms of v1model's `HashAlgorithm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashAlgorithm {
    /// CRC-32 (IEEE, reflected, as zlib).
    Crc32,
    /// CRC-32 with a custom polynomial (bmv2: configured at runtime; default as crc32).
    Crc32Custom,
    /// CRC-16/ARC.
    Crc16,
    /// CRC-16 with custom polynomial.
    Crc16Custom,
    /// Random value (not a function of the input).
    Random,
    /// The input bits themselves, truncated.
    Identity,
    /// 16-bit ones' complement sum.
    Csum16,
    /// 16-bit XOR of the input's 16-bit words.
    Xor16,
}

/// An action profile (`action_profile`) or selector (`action_selector`).
#[derive(Clone, Copy, Debug)]
pub struct ActionProfileInfo {
    /// Profile id.
    pub id: u32,
    /// Name.
    pub name: &'static str,
    /// Tables sharing it.
    pub table_ids: &'static [u32],
    /// `Some((algorithm, output width))` for an `action_selector`.
    pub selector: Option<(HashAlgorithm, u32)>,
    /// Maximum number of members.
    pub size: u32,
}

/// What a counter or meter counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CounterUnit {
    /// Bytes.
    Bytes,
    /// Packets.
    Packets,
    /// Both.
    Both,
}

/// An indirect (`counter`) or direct (`direct_counter`) counter.
#[derive(Clone, Copy, Debug)]
pub struct CounterInfo {
    /// Counter id.
    pub id: u32,
    /// Name.
    pub name: &'static str,
    /// Unit.
    pub unit: CounterUnit,
    /// Number of cells (indirect) or 0 (direct).
    pub size: u32,
    /// Table for a direct counter.
    pub direct_table: Option<u32>,
}

/// An indirect (`meter`) or direct (`direct_meter`) meter.
#[derive(Clone, Copy, Debug)]
pub struct MeterInfo {
    /// Meter id.
    pub id: u32,
    /// Name.
    pub name: &'static str,
    /// Bytes or packets.
    pub unit: CounterUnit,
    /// Number of cells (indirect) or 0 (direct).
    pub size: u32,
    /// Table for a direct meter.
    pub direct_table: Option<u32>,
}

/// A `register<T>(N)` (`T` a `bit<W>`, `int<W>`, `bool` or serializable enum).
#[derive(Clone, Copy, Debug)]
pub struct RegisterInfo {
    /// Register id.
    pub id: u32,
    /// Name.
    pub name: &'static str,
    /// Cell width in bits.
    pub bitwidth: u32,
    /// The cell is an `int<W>` (or an enum over one): P4Info says `int`
    /// and P4Runtime carries it in two's complement (spec §8.4).
    pub signed: bool,
    /// Number of cells.
    pub size: u32,
}

/// A field of a digest, controller header or struct-typed value set.
#[derive(Clone, Copy, Debug)]
pub struct MetaFieldInfo {
    /// Id (1-based).
    pub id: u32,
    /// Name (a nested struct's leaf is named by its dotted path).
    pub name: &'static str,
    /// Width in bits.
    pub bitwidth: u32,
    /// An `int<W>` field (two's complement on the wire, spec §8.4).
    pub signed: bool,
}

/// A digest (`digest<T>(receiver, data)` call site type).
#[derive(Clone, Copy, Debug)]
pub struct DigestInfo {
    /// Digest id.
    pub id: u32,
    /// Name (the struct type name; for a bit string, its `typedef` name or
    /// p4c's `digest_N`).
    pub name: &'static str,
    /// Struct members in order.
    pub fields: &'static [MetaFieldInfo],
    /// The data is one bit string (`digest<bit<32>>(1, x)`), described by
    /// the only entry of `fields` (P4Info `type_spec.bitstring`, P4Runtime
    /// `P4Data.bitstring`); otherwise a struct of `fields`.
    pub scalar: bool,
}

/// A `@controller_header("packet_in")` / `("packet_out")` header.
#[derive(Clone, Copy, Debug)]
pub struct ControllerHeaderInfo {
    /// Id.
    pub id: u32,
    /// `packet_in` or `packet_out`.
    pub name: &'static str,
    /// Header fields in order.
    pub fields: &'static [MetaFieldInfo],
}

/// A parser value set.
#[derive(Clone, Copy, Debug)]
pub struct ValueSetInfo {
    /// Id.
    pub id: u32,
    /// Name.
    pub name: &'static str,
    /// Width in bits of each member (tuple members concatenated).
    pub bitwidth: u32,
    /// Declared size.
    pub size: u32,
    /// The element type's leaves when it is a struct (nested structs
    /// flattened, named by dotted path), in order, the first one in the
    /// most significant bits of the concatenated member; empty for a
    /// `bit<W>` or tuple element (one match field, id 1, over the whole).
    pub fields: &'static [MetaFieldInfo],
}

/// Everything the runtime and the control plane need to know about a program.
#[derive(Clone, Copy, Debug)]
pub struct ProgramInfo {
    /// Program name (file stem).
    pub name: &'static str,
    /// Architecture (`v1model`).
    pub arch: &'static str,
    /// Tables.
    pub tables: &'static [TableInfo],
    /// Actions.
    pub actions: &'static [ActionInfo],
    /// Action profiles and selectors.
    pub action_profiles: &'static [ActionProfileInfo],
    /// Indirect and direct counters.
    pub counters: &'static [CounterInfo],
    /// Indirect and direct meters.
    pub meters: &'static [MeterInfo],
    /// Registers.
    pub registers: &'static [RegisterInfo],
    /// Digests.
    pub digests: &'static [DigestInfo],
    /// Controller headers.
    pub controller_headers: &'static [ControllerHeaderInfo],
    /// Parser value sets.
    pub value_sets: &'static [ValueSetInfo],
    /// The P4Info in protobuf text format, exactly as `--p4info` writes it.
    pub p4info_text: &'static str,
}

impl ProgramInfo {
    /// A program with no objects, for `..ProgramInfo::EMPTY` in
    /// descriptions that have only a few (tests, hand-written twins).
    pub const EMPTY: ProgramInfo = ProgramInfo {
        name: "",
        arch: "v1model",
        tables: &[],
        actions: &[],
        action_profiles: &[],
        counters: &[],
        meters: &[],
        registers: &[],
        digests: &[],
        controller_headers: &[],
        value_sets: &[],
        p4info_text: "",
    };

    /// Finds a table by id.
    pub fn table(&self, id: u32) -> Option<&'static TableInfo> {
        self.tables.iter().find(|t| t.id == id)
    }

    /// Finds an action by id.
    pub fn action(&self, id: u32) -> Option<&'static ActionInfo> {
        self.actions.iter().find(|a| a.id == id)
    }

    /// Finds a table by full name or by a unique dotted suffix (`ipv4_lpm`
    /// for `MyIngress.ipv4_lpm`), as P4Runtime clients resolve names.
    pub fn table_by_name(&self, name: &str) -> Option<&'static TableInfo> {
        resolve_name(self.tables.iter(), name, |t| t.name)
    }

    /// Finds an action by full name or unique dotted suffix.
    pub fn action_by_name(&self, name: &str) -> Option<&'static ActionInfo> {
        resolve_name(self.actions.iter(), name, |a| a.name)
    }
}

/// Why a name did not pick exactly one object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// Nothing of that kind has this name.
    #[error("no {kind} named {name:?} (known: {})", known.join(", "))]
    Unknown {
        /// What was looked for (`table`, `counter`, ...).
        kind: &'static str,
        /// The name as given.
        name: String,
        /// Every full name of that kind.
        known: Vec<String>,
    },
    /// Several objects end in this dotted suffix.
    #[error("{kind} name {name:?} is ambiguous: {}", candidates.join(", "))]
    Ambiguous {
        /// What was looked for.
        kind: &'static str,
        /// The name as given.
        name: String,
        /// The full names it could mean.
        candidates: Vec<String>,
    },
}

/// The one of `items` that `text` names, as P4Runtime tools resolve names:
/// a full name or an alias (`names_of` gives both; an empty alias is none),
/// else a unique dotted suffix (`ipv4_lpm` for `MyIngress.ipv4_lpm`, never
/// `lpm`). The one name lookup of the project: the runtime, the STF runner,
/// the fabric service and `rocectl` all go through it.
pub fn find_named<'a, T: 'a>(
    kind: &'static str,
    items: impl Iterator<Item = &'a T> + Clone,
    text: &str,
    names_of: impl Fn(&T) -> (&str, &str),
) -> Result<&'a T, NameError> {
    if let Some(hit) = items.clone().find(|i| {
        let (full, alias) = names_of(i);
        full == text || (!alias.is_empty() && alias == text)
    }) {
        return Ok(hit);
    }
    let is_suffix = |full: &str| {
        full.len() > text.len()
            && full.ends_with(text)
            && full.as_bytes()[full.len() - text.len() - 1] == b'.'
    };
    let full_names = |it: &mut dyn Iterator<Item = &'a T>| -> Vec<String> {
        it.map(|i| names_of(i).0.to_string()).collect()
    };
    let mut hits = items.clone().filter(|i| is_suffix(names_of(i).0));
    match (hits.next(), hits.next()) {
        (Some(one), None) => Ok(one),
        (None, _) => Err(NameError::Unknown {
            kind,
            name: text.to_string(),
            known: full_names(&mut items.clone()),
        }),
        (Some(_), Some(_)) => Err(NameError::Ambiguous {
            kind,
            name: text.to_string(),
            candidates: full_names(&mut items.filter(|i| is_suffix(names_of(i).0))),
        }),
    }
}

/// [`find_named`] for objects with one name, when the caller needs no
/// diagnostic.
pub fn resolve_name<'a, T: 'a>(
    items: impl Iterator<Item = &'a T> + Clone,
    name: &str,
    name_of: impl Fn(&T) -> &str,
) -> Option<&'a T> {
    find_named("object", items, name, |t| (name_of(t), "")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names<'a>(n: &'a (&'static str, &'static str)) -> (&'a str, &'a str) {
        *n
    }

    #[test]
    fn names_resolve_by_full_name_alias_or_unique_dotted_suffix() {
        let items = [
            ("MyIngress.ipv4_lpm", "ipv4_lpm"),
            ("MyIngress.acl", ""),
            ("MyEgress.acl", "egress_acl"),
        ];
        let find = |text| find_named("table", items.iter(), text, names);
        assert_eq!(find("MyIngress.ipv4_lpm").unwrap().0, "MyIngress.ipv4_lpm");
        assert_eq!(find("egress_acl").unwrap().0, "MyEgress.acl");
        assert_eq!(find("MyEgress.acl").unwrap().0, "MyEgress.acl");
        assert_eq!(
            find("acl"),
            Err(NameError::Ambiguous {
                kind: "table",
                name: "acl".into(),
                candidates: vec!["MyIngress.acl".into(), "MyEgress.acl".into()],
            })
        );
        // A suffix must start at a dot: `lpm` is not `ipv4_lpm`.
        let unknown = find("lpm").unwrap_err();
        assert!(matches!(unknown, NameError::Unknown { .. }));
        assert_eq!(
            unknown.to_string(),
            "no table named \"lpm\" (known: MyIngress.ipv4_lpm, MyIngress.acl, MyEgress.acl)"
        );
        assert!(resolve_name(items.iter(), "acl", |i| i.0).is_none());
        assert_eq!(
            resolve_name(items.iter(), "ipv4_lpm", |i| i.0).unwrap().0,
            "MyIngress.ipv4_lpm"
        );
    }
}
