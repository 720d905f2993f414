//! What the checker computes about a program once its IR is complete, kept
//! beside the [`super::Program`] as naga keeps a `ModuleInfo` beside its
//! `Module`: the P4Info objects with their P4Runtime ids (P4Runtime spec §6)
//! and the [`Layout`] that maps IR handles and control instances to them.
//!
//! Contract: every value here is owned, so a process that compiles many
//! programs keeps nothing once a result is dropped. The types mirror
//! `p4_target::info` field for field with `String`/`Vec` where the target
//! has `&'static` data (the generated `static PROGRAM_INFO` needs that form;
//! `back::rust::info` writes it from this one, `back::p4info` reads this
//! one). Field meanings and units are those of the mirrored target types.
//! The IR itself is not patched after checking: indices the back end needs
//! (a table's place in `tables`, an extern's in its kind's vector, an
//! action's id) are looked up in [`Layout`] by handle or instance index.

pub use p4_target::info::{ActionRef, ActionScope, CounterUnit, HashAlgorithm, MatchKind};
use p4_target::runtime::FieldMatch;

/// One key field of a table (`p4_target::info::KeyInfo`).
#[derive(Clone, Debug)]
pub struct KeyInfo {
    /// Match field id.
    pub id: u32,
    /// Name (the key expression as written, or its `@name`).
    pub name: String,
    /// Width in bits.
    pub bitwidth: u32,
    /// Match kind.
    pub kind: MatchKind,
}

/// One action parameter (`p4_target::info::ParamInfo`).
#[derive(Clone, Debug)]
pub struct ParamInfo {
    /// Param id.
    pub id: u32,
    /// Name.
    pub name: String,
    /// Width in bits.
    pub bitwidth: u32,
}

/// An action (`p4_target::info::ActionInfo`).
#[derive(Clone, Debug)]
pub struct ActionInfo {
    /// Action id.
    pub id: u32,
    /// Fully qualified name.
    pub name: String,
    /// Control-plane parameters, in order.
    pub params: Vec<ParamInfo>,
}

/// An entry present at start (`p4_target::info::ConstEntryInfo`).
#[derive(Clone, Debug)]
pub struct ConstEntryInfo {
    /// One item per key field; `None` is a wildcard.
    pub matches: Vec<Option<FieldMatch>>,
    /// Priority, higher wins.
    pub priority: i32,
    /// Action id.
    pub action_id: u32,
    /// Action arguments.
    pub params: Vec<u128>,
}

/// A table (`p4_target::info::TableInfo`).
#[derive(Clone, Debug)]
pub struct TableInfo {
    /// Table id.
    pub id: u32,
    /// Fully qualified name.
    pub name: String,
    /// Key fields in order.
    pub keys: Vec<KeyInfo>,
    /// Actions the table may run.
    pub actions: Vec<ActionRef>,
    /// Declared size.
    pub size: u32,
    /// Action profile or selector id.
    pub implementation: Option<u32>,
    /// Default action at start: action id and arguments.
    pub default_action: (u32, Vec<u128>),
    /// `const default_action`.
    pub default_is_const: bool,
    /// `const entries`.
    pub is_const: bool,
    /// Entries present at start.
    pub const_entries: Vec<ConstEntryInfo>,
    /// Direct counter id.
    pub direct_counter: Option<u32>,
    /// Direct meter id.
    pub direct_meter: Option<u32>,
    /// `support_timeout = true`.
    pub idle_timeout: bool,
}

/// An action profile or selector (`p4_target::info::ActionProfileInfo`).
#[derive(Clone, Debug)]
pub struct ActionProfileInfo {
    /// Profile id.
    pub id: u32,
    /// Name.
    pub name: String,
    /// Tables sharing it.
    pub table_ids: Vec<u32>,
    /// `Some((algorithm, output width))` for a selector.
    pub selector: Option<(HashAlgorithm, u32)>,
    /// Maximum number of members.
    pub size: u32,
}

/// A counter (`p4_target::info::CounterInfo`).
#[derive(Clone, Debug)]
pub struct CounterInfo {
    /// Counter id.
    pub id: u32,
    /// Name.
    pub name: String,
    /// Unit.
    pub unit: CounterUnit,
    /// Cells (indirect) or 0 (direct).
    pub size: u32,
    /// Table of a direct counter.
    pub direct_table: Option<u32>,
}

/// A meter (`p4_target::info::MeterInfo`).
#[derive(Clone, Debug)]
pub struct MeterInfo {
    /// Meter id.
    pub id: u32,
    /// Name.
    pub name: String,
    /// Unit.
    pub unit: CounterUnit,
    /// Cells (indirect) or 0 (direct).
    pub size: u32,
    /// Table of a direct meter.
    pub direct_table: Option<u32>,
}

/// A register (`p4_target::info::RegisterInfo`).
#[derive(Clone, Debug)]
pub struct RegisterInfo {
    /// Register id.
    pub id: u32,
    /// Name.
    pub name: String,
    /// Cell width in bits.
    pub bitwidth: u32,
    /// An `int<W>` cell.
    pub signed: bool,
    /// Number of cells.
    pub size: u32,
}

/// A field of a digest, controller header or value set
/// (`p4_target::info::MetaFieldInfo`).
#[derive(Clone, Debug)]
pub struct MetaFieldInfo {
    /// Id.
    pub id: u32,
    /// Name.
    pub name: String,
    /// Width in bits.
    pub bitwidth: u32,
    /// An `int<W>` field.
    pub signed: bool,
}

/// A digest (`p4_target::info::DigestInfo`).
#[derive(Clone, Debug)]
pub struct DigestInfo {
    /// Digest id.
    pub id: u32,
    /// Name.
    pub name: String,
    /// Fields in order.
    pub fields: Vec<MetaFieldInfo>,
    /// A bit string, the only entry of `fields` (not a struct).
    pub scalar: bool,
}

/// A controller header (`p4_target::info::ControllerHeaderInfo`).
#[derive(Clone, Debug)]
pub struct ControllerHeaderInfo {
    /// Id.
    pub id: u32,
    /// `packet_in` or `packet_out`.
    pub name: String,
    /// Fields in order.
    pub fields: Vec<MetaFieldInfo>,
}

/// A parser value set (`p4_target::info::ValueSetInfo`).
#[derive(Clone, Debug)]
pub struct ValueSetInfo {
    /// Id.
    pub id: u32,
    /// Name.
    pub name: String,
    /// Width of each member in bits.
    pub bitwidth: u32,
    /// Declared size.
    pub size: u32,
    /// The element's leaves when it is a struct.
    pub fields: Vec<MetaFieldInfo>,
}

/// Where one control instance's objects are (one per entry of
/// [`super::Program::instances`], same index).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InstanceLayout {
    /// Index into [`ProgramInfo::tables`] of each of the control's tables.
    pub tables: Vec<u32>,
    /// Per extern of the control: index into the vector of its kind
    /// (registers, counters, meters, action profiles), or into
    /// [`Layout::user_instances`] for a user extern object.
    pub externs: Vec<u32>,
}

/// The side table of a checked program: facts computed after its IR,
/// keyed by IR handle or instance index.
#[derive(Clone, Debug, Default)]
pub struct Layout {
    /// By index into [`super::Program::instances`].
    pub instances: Vec<InstanceLayout>,
    /// By parser handle index, per extern instance of the parser (its own
    /// and the top-level ones it uses): as [`InstanceLayout::externs`].
    pub parsers: Vec<Vec<u32>>,
    /// By function handle index, per top-level extern instance the
    /// function uses: as [`InstanceLayout::externs`].
    pub functions: Vec<Vec<u32>>,
    /// By action handle index, per top-level extern instance a top-level
    /// action uses: as [`InstanceLayout::externs`].
    pub actions: Vec<Vec<u32>>,
    /// P4Info id of each action, by action handle index.
    pub action_ids: Vec<u32>,
    /// Objects of user extern types, program-wide, one per qualified name.
    pub user_instances: Vec<super::UserInstance>,
}

/// Everything the control plane and the back ends need to know about a
/// checked program beside its IR (`p4_target::info::ProgramInfo` plus the
/// [`Layout`]).
#[derive(Clone, Debug, Default)]
pub struct ProgramInfo {
    /// Program name (file stem).
    pub name: String,
    /// Architecture (`v1model`).
    pub arch: String,
    /// Tables, in instance order then declaration order.
    pub tables: Vec<TableInfo>,
    /// Actions.
    pub actions: Vec<ActionInfo>,
    /// Action profiles and selectors.
    pub action_profiles: Vec<ActionProfileInfo>,
    /// Indirect and direct counters.
    pub counters: Vec<CounterInfo>,
    /// Indirect and direct meters.
    pub meters: Vec<MeterInfo>,
    /// Registers.
    pub registers: Vec<RegisterInfo>,
    /// Digests.
    pub digests: Vec<DigestInfo>,
    /// Controller headers.
    pub controller_headers: Vec<ControllerHeaderInfo>,
    /// Parser value sets.
    pub value_sets: Vec<ValueSetInfo>,
    /// Where each instance's objects are, and each action's id.
    pub layout: Layout,
}

impl From<&p4_target::info::ProgramInfo> for ProgramInfo {
    /// The owned form of a target description (a generated program's
    /// `PROGRAM_INFO`, or one written by hand in a test), with an empty
    /// layout.
    fn from(i: &p4_target::info::ProgramInfo) -> Self {
        let fields = |fs: &[p4_target::info::MetaFieldInfo]| -> Vec<MetaFieldInfo> {
            fs.iter()
                .map(|f| MetaFieldInfo {
                    id: f.id,
                    name: f.name.into(),
                    bitwidth: f.bitwidth,
                    signed: f.signed,
                })
                .collect()
        };
        ProgramInfo {
            name: i.name.into(),
            arch: i.arch.into(),
            tables: i
                .tables
                .iter()
                .map(|t| TableInfo {
                    id: t.id,
                    name: t.name.into(),
                    keys: t
                        .keys
                        .iter()
                        .map(|k| KeyInfo {
                            id: k.id,
                            name: k.name.into(),
                            bitwidth: k.bitwidth,
                            kind: k.kind,
                        })
                        .collect(),
                    actions: t.actions.to_vec(),
                    size: t.size,
                    implementation: t.implementation,
                    default_action: (t.default_action.0, t.default_action.1.to_vec()),
                    default_is_const: t.default_is_const,
                    is_const: t.is_const,
                    const_entries: t
                        .const_entries
                        .iter()
                        .map(|e| ConstEntryInfo {
                            matches: e.matches.to_vec(),
                            priority: e.priority,
                            action_id: e.action_id,
                            params: e.params.to_vec(),
                        })
                        .collect(),
                    direct_counter: t.direct_counter,
                    direct_meter: t.direct_meter,
                    idle_timeout: t.idle_timeout,
                })
                .collect(),
            actions: i
                .actions
                .iter()
                .map(|a| ActionInfo {
                    id: a.id,
                    name: a.name.into(),
                    params: a
                        .params
                        .iter()
                        .map(|p| ParamInfo {
                            id: p.id,
                            name: p.name.into(),
                            bitwidth: p.bitwidth,
                        })
                        .collect(),
                })
                .collect(),
            action_profiles: i
                .action_profiles
                .iter()
                .map(|p| ActionProfileInfo {
                    id: p.id,
                    name: p.name.into(),
                    table_ids: p.table_ids.to_vec(),
                    selector: p.selector,
                    size: p.size,
                })
                .collect(),
            counters: i
                .counters
                .iter()
                .map(|c| CounterInfo {
                    id: c.id,
                    name: c.name.into(),
                    unit: c.unit,
                    size: c.size,
                    direct_table: c.direct_table,
                })
                .collect(),
            meters: i
                .meters
                .iter()
                .map(|m| MeterInfo {
                    id: m.id,
                    name: m.name.into(),
                    unit: m.unit,
                    size: m.size,
                    direct_table: m.direct_table,
                })
                .collect(),
            registers: i
                .registers
                .iter()
                .map(|r| RegisterInfo {
                    id: r.id,
                    name: r.name.into(),
                    bitwidth: r.bitwidth,
                    signed: r.signed,
                    size: r.size,
                })
                .collect(),
            digests: i
                .digests
                .iter()
                .map(|d| DigestInfo {
                    id: d.id,
                    name: d.name.into(),
                    fields: fields(d.fields),
                    scalar: d.scalar,
                })
                .collect(),
            controller_headers: i
                .controller_headers
                .iter()
                .map(|h| ControllerHeaderInfo {
                    id: h.id,
                    name: h.name.into(),
                    fields: fields(h.fields),
                })
                .collect(),
            value_sets: i
                .value_sets
                .iter()
                .map(|v| ValueSetInfo {
                    id: v.id,
                    name: v.name.into(),
                    bitwidth: v.bitwidth,
                    size: v.size,
                    fields: fields(v.fields),
                })
                .collect(),
            layout: Layout::default(),
        }
    }
}
