//! Packet traces: what one packet met on its way through the P4 program and
//! the traffic manager, as one ordered list of [`Event`]s (issue #16).
//!
//! One set of types serves every producer and consumer: generated code
//! records the P4 events (parser states, extracted headers, tables,
//! externs) into the runtime's [`Tracer`]; the switch core
//! (`dataplane::switch`) adds arrival, drop, traffic-manager and departure
//! events and hands out finished [`PacketTrace`]s; the daemon streams them
//! (`rocectl trace`), the simulator and `p4-to-rust stf --trace` print them.
//! The JSON form (one [`PacketTrace`] a line, `serde_json`) is the schema
//! documented in `docs/trace.md`; every struct refuses unknown fields so a
//! round trip proves a trace holds only documented fields.
//!
//! Contract: when no packet is being traced, [`Tracer::on`] is `false` and
//! generated code pays one predictable branch per trace point; nothing
//! allocates. While a packet is traced, events allocate (names and field
//! lists); the event buffer is reused from packet to packet. Field values
//! are bit strings of at most 128 bits, written as hex strings ([`Value`])
//! so that JSON readers with 53-bit numbers lose nothing. Times are
//! nanoseconds of the switch's clock; sizes are bytes.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::info::ProgramInfo;
use crate::runtime::{FieldMatch, Runtime};
use crate::table::EntryRef;

/// A P4 value (at most 128 bits), as a `"0x.."` string in JSON.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Value(pub u128);

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

impl Serialize for Value {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        parse_number(&s)
            .map(Value)
            .ok_or_else(|| serde::de::Error::custom(format!("`{s}` is not a 0x.. value")))
    }
}

/// `0x..` (hex) or decimal, at most 128 bits.
pub fn parse_number(s: &str) -> Option<u128> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u128::from_str_radix(&hex.replace('_', ""), 16).ok(),
        None => s.replace('_', "").parse().ok(),
    }
}

/// A named value: a header field, a key field or an action parameter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Field {
    /// Name as the program spells it.
    pub name: String,
    /// Value.
    pub value: Value,
}

/// The table entry a lookup matched.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchedEntry {
    /// One item per key field, in key order: `0x5` (exact, optional),
    /// `0xa000000/8` (LPM), `0x1&&&0xff` (ternary), `0x1..0x5` (range),
    /// `*` (wildcard).
    pub matches: Vec<String>,
    /// Its priority (0 for tables without ternary, range or optional keys).
    pub priority: i32,
}

/// A byte the program changed: offset in the frame, before and after.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ByteChange {
    /// Offset from the start of the frame.
    pub offset: u32,
    /// The byte as it arrived (absent: the frame grew).
    pub before: Option<u8>,
    /// The byte as it leaves (absent: the frame shrank).
    pub after: Option<u8>,
}

/// The part of the switch a pass runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Parser, `verifyChecksum` and the ingress control.
    Ingress,
    /// The egress control (then `computeChecksum` and the deparser).
    Egress,
}

/// One thing that happened to the packet, in the order it happened.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case", deny_unknown_fields)]
pub enum Event {
    /// The frame arrived.
    Arrive {
        /// Ingress port.
        port: u16,
        /// Switch time, ns.
        time_ns: u64,
        /// Frame length.
        bytes: u32,
    },
    /// A pipeline pass starts.
    Pass {
        /// Ingress or egress.
        stage: Stage,
        /// v1model `instance_type` (0 normal, 1/2 clones, 3 recirculated,
        /// 4 replica, 6 resubmitted).
        instance_type: u32,
    },
    /// The parser entered a state.
    ParserState {
        /// Parser name.
        parser: String,
        /// State name.
        state: String,
    },
    /// A header was extracted.
    Extract {
        /// The header instance (`hdr.udp`, `hdr.vlan[1]`).
        header: String,
        /// Its fields in declaration order (varbit fields left out).
        fields: Vec<Field>,
    },
    /// The parser stopped with an error (the packet still runs ingress).
    ParserError {
        /// v1model error name (`PacketTooShort`, `NoMatch`, ...).
        error: String,
    },
    /// A table was applied.
    Table {
        /// Table name (P4Info name).
        table: String,
        /// Key fields and the values looked up.
        key: Vec<Field>,
        /// Whether an entry matched.
        hit: bool,
        /// The matched entry (absent on a miss).
        entry: Option<MatchedEntry>,
        /// The action run (P4Info name; `NoAction` for none).
        action: String,
        /// Its parameters.
        params: Vec<Field>,
    },
    /// An extern call that changes state or steers the packet: `count`,
    /// `execute_meter` (value: colour), `register_write` (value: written),
    /// `hash` / `random` (value: result), `mark_to_drop`, `clone`,
    /// `resubmit`, `recirculate`, `digest`.
    Extern {
        /// The call.
        call: String,
        /// The object (counter, meter, register, digest name), if any.
        object: Option<String>,
        /// Cell index or clone session, if any.
        index: Option<u64>,
        /// Result or written value, if any.
        value: Option<Value>,
    },
    /// The packet (this copy) goes no further.
    Drop {
        /// Why: a switch drop reason (`ingress_drop`, `egress_drop`, ...) or
        /// `tm_<reason>` for the traffic manager's.
        reason: String,
    },
    /// The traffic manager admitted this copy.
    Enqueue {
        /// Copy number (0 for the first; multicast replicas and clones count up).
        copy: u32,
        /// Ingress port charged.
        ingress_port: u16,
        /// Egress port.
        egress_port: u16,
        /// Priority 0..=7.
        priority: u8,
        /// Ingress priority group charged.
        pg: u8,
        /// Whether the PG is lossless (PFC on its priorities).
        lossless: bool,
        /// Egress queue.
        queue: u8,
        /// Bytes charged (whole cells).
        charged_bytes: u64,
        /// The PG's use of the shared pool after this packet.
        pg_shared_bytes: u64,
        /// The PG's use of its headroom after this packet.
        pg_headroom_bytes: u64,
        /// The whole shared pool in use after this packet.
        shared_used_bytes: u64,
        /// The whole headroom in use after this packet.
        headroom_used_bytes: u64,
        /// Queue depth ahead of the packet.
        queue_depth_bytes: u64,
        /// Packets ahead of it.
        queue_depth_packets: u32,
        /// Whether a received PFC paused the egress priority at enqueue.
        egress_paused: bool,
    },
    /// A PFC transition this packet caused on its ingress PG.
    Pfc {
        /// The port the PFC frame goes out on (the ingress port).
        port: u16,
        /// The priority group.
        pg: u8,
        /// `true`: XOFF asserted; `false`: XON.
        xoff: bool,
    },
    /// The traffic manager refused this copy.
    TmDrop {
        /// The traffic manager's reason (`lossy_tail_drop`, ...).
        reason: String,
    },
    /// This copy left its egress queue.
    Dequeue {
        /// Copy number.
        copy: u32,
        /// Egress port.
        egress_port: u16,
        /// Queue.
        queue: u8,
        /// Switch time, ns.
        time_ns: u64,
        /// Time spent queued, ns.
        queued_ns: u64,
        /// Of that, time the egress priority was paused by received PFC, ns.
        paused_ns: u64,
        /// Queue bytes left behind (v1model `deq_qdepth_bytes`).
        queue_depth_bytes: u64,
    },
    /// The program's ECN/RED decision in egress (programs that have one,
    /// such as `roce_switch.p4`'s `ecn_red`).
    Ecn {
        /// Queue depth the decision used, bytes.
        depth_bytes: u64,
        /// No marks below this depth.
        kmin_bytes: u64,
        /// Every packet marked above it.
        kmax_bytes: u64,
        /// Marking probability at this depth, 0..=1.
        probability: f64,
        /// Whether the packet left with CE.
        marked: bool,
    },
    /// The deparser ran.
    Deparse {
        /// Headers emitted, in order.
        headers: Vec<String>,
        /// Frame length out.
        bytes: u32,
        /// Bytes that differ from the arriving frame.
        changed: Vec<ByteChange>,
    },
    /// The copy left the switch.
    Depart {
        /// Egress port (the CPU port for a packet-in).
        port: u16,
        /// Switch time, ns.
        time_ns: u64,
        /// Frame length.
        bytes: u32,
    },
}

/// The trace of one copy of one packet, from arrival to departure or drop.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PacketTrace {
    /// Sequence number of the arriving packet (copies share it).
    pub packet: u64,
    /// Copy number (0 for the first; replicas and clones count up).
    pub copy: u32,
    /// Switch name, when the producer knows it (simulator nodes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub switch: Option<String>,
    /// What happened, in order.
    pub events: Vec<Event>,
}

/// The P4 program's trace points write here (a field of [`Runtime`]).
#[derive(Debug, Default)]
pub struct Tracer {
    /// A packet is being traced: the one flag generated code tests.
    pub on: bool,
    events: Vec<Event>,
}

impl Tracer {
    /// Starts recording (the buffer is emptied and kept).
    pub fn start(&mut self) {
        self.on = true;
        self.events.clear();
    }

    /// Stops recording and moves what was recorded to the end of `out`.
    pub fn finish_into(&mut self, out: &mut Vec<Event>) {
        self.on = false;
        out.append(&mut self.events);
    }

    /// Stops recording and forgets it.
    pub fn cancel(&mut self) {
        self.on = false;
        self.events.clear();
    }

    /// What has been recorded since [`Tracer::start`].
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// Records an event.
    #[cold]
    pub fn push(&mut self, event: Event) {
        self.events.push(event);
    }

    /// The parser entered `state`.
    #[cold]
    #[inline(never)]
    pub fn parser_state(&mut self, parser: &str, state: &str) {
        self.push(Event::ParserState {
            parser: parser.into(),
            state: state.into(),
        });
    }

    /// `header` was extracted with these field values.
    #[cold]
    #[inline(never)]
    pub fn extract(&mut self, header: &str, fields: &[(&str, u128)]) {
        let fields = fields
            .iter()
            .map(|(n, v)| Field {
                name: (*n).into(),
                value: Value(*v),
            })
            .collect();
        self.push(Event::Extract {
            header: header.into(),
            fields,
        });
    }

    /// The parser failed with v1model error `code`.
    #[cold]
    #[inline(never)]
    pub fn parser_error(&mut self, code: u32) {
        self.push(Event::ParserError {
            error: crate::v1model::error_name(code).into_owned(),
        });
    }

    /// A state-changing extern call.
    #[cold]
    #[inline(never)]
    pub fn call(
        &mut self,
        call: &str,
        object: Option<&str>,
        index: Option<u64>,
        value: Option<u128>,
    ) {
        self.push(Event::Extern {
            call: call.into(),
            object: object.map(Into::into),
            index,
            value: value.map(Value),
        });
    }
}

impl Runtime {
    /// Records a table application: generated code calls this (when
    /// [`Tracer::on`]) with the table's index, the key it looked up, the
    /// result and the action parameters it copied out.
    #[cold]
    #[inline(never)]
    pub fn trace_table(
        &mut self,
        table: usize,
        key: &[u128],
        hit: bool,
        entry: Option<EntryRef>,
        action_id: u32,
        params: &[u128],
    ) {
        let info: &'static ProgramInfo = self.info;
        let Some(t) = self.tables.get(table) else {
            return;
        };
        let tinfo = &info.tables[table];
        let key = tinfo
            .keys
            .iter()
            .zip(key)
            .map(|(k, v)| Field {
                name: k.name.to_string(),
                value: Value(*v),
            })
            .collect();
        let entry = entry.and_then(|r| t.entry(r)).map(|e| MatchedEntry {
            matches: e
                .matches
                .iter()
                .map(|m| describe_match(m.as_ref()))
                .collect(),
            priority: e.priority,
        });
        let (action, params) = match info.actions.iter().find(|a| a.id == action_id) {
            Some(a) => (
                a.name.to_string(),
                a.params
                    .iter()
                    .zip(params)
                    .map(|(p, v)| Field {
                        name: p.name.to_string(),
                        value: Value(*v),
                    })
                    .collect(),
            ),
            None => ("NoAction".to_string(), Vec::new()),
        };
        self.trace.push(Event::Table {
            table: tinfo.name.to_string(),
            key,
            hit,
            entry,
            action,
            params,
        });
    }
}

fn describe_match(m: Option<&FieldMatch>) -> String {
    match m {
        None => "*".into(),
        Some(FieldMatch::Exact(v) | FieldMatch::Optional(v)) => format!("{v:#x}"),
        Some(FieldMatch::Lpm { value, prefix_len }) => format!("{value:#x}/{prefix_len}"),
        Some(FieldMatch::Ternary { value, mask }) => format!("{value:#x}&&&{mask:#x}"),
        Some(FieldMatch::Range { low, high }) => format!("{low:#x}..{high:#x}"),
    }
}

// ---- filters -------------------------------------------------------------

/// A match on extracted header fields: comparisons joined by `&&` (binds
/// tighter) and `||`, e.g. `udp.dst_port == 4791 && bth.opcode == 0x0a`.
/// A header is named by its instance name with or without the `hdr.`
/// prefix; a comparison on a header the packet does not carry is false.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldFilter {
    /// Alternatives (`||`), each a conjunction (`&&`) of comparisons.
    any: Vec<Vec<Comparison>>,
    text: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Comparison {
    header: String,
    field: String,
    equal: bool,
    value: u128,
}

/// Why a filter expression does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("bad trace filter `{text}`: {reason}")]
pub struct FilterError {
    text: String,
    reason: String,
}

impl std::str::FromStr for FieldFilter {
    type Err = FilterError;

    fn from_str(text: &str) -> Result<Self, FilterError> {
        let err = |reason: String| FilterError {
            text: text.to_string(),
            reason,
        };
        let mut any = Vec::new();
        for alt in text.split("||") {
            let mut all = Vec::new();
            for cmp in alt.split("&&") {
                let (lhs, rhs, equal) = if let Some((l, r)) = cmp.split_once("==") {
                    (l, r, true)
                } else if let Some((l, r)) = cmp.split_once("!=") {
                    (l, r, false)
                } else {
                    return Err(err(format!(
                        "`{}` is not `HEADER.FIELD == VALUE`",
                        cmp.trim()
                    )));
                };
                let lhs = lhs.trim();
                let (header, field) = lhs
                    .rsplit_once('.')
                    .ok_or_else(|| err(format!("`{lhs}` is not HEADER.FIELD")))?;
                let header = header.strip_prefix("hdr.").unwrap_or(header);
                if header.is_empty() || field.is_empty() {
                    return Err(err(format!("`{lhs}` is not HEADER.FIELD")));
                }
                let value = parse_number(rhs)
                    .ok_or_else(|| err(format!("`{}` is not a number", rhs.trim())))?;
                all.push(Comparison {
                    header: header.to_string(),
                    field: field.to_string(),
                    equal,
                    value,
                });
            }
            any.push(all);
        }
        Ok(FieldFilter {
            any,
            text: text.trim().to_string(),
        })
    }
}

impl fmt::Display for FieldFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FieldFilter {
    /// Whether the headers extracted in `events` satisfy the filter.
    pub fn matches(&self, events: &[Event]) -> bool {
        self.any
            .iter()
            .any(|all| all.iter().all(|c| c.holds(events)))
    }
}

impl Comparison {
    fn holds(&self, events: &[Event]) -> bool {
        let found = events.iter().find_map(|e| match e {
            Event::Extract { header, fields } if header_is(header, &self.header) => fields
                .iter()
                .find(|f| f.name == self.field)
                .map(|f| f.value.0),
            _ => None,
        });
        match found {
            Some(v) => (v == self.value) == self.equal,
            None => false,
        }
    }
}

/// `hdr.udp` is `udp` and `hdr.udp`; `hdr.vlan[0]` is also `vlan`.
fn header_is(instance: &str, wanted: &str) -> bool {
    let short = instance.strip_prefix("hdr.").unwrap_or(instance);
    let base = short.split('[').next().unwrap_or(short);
    instance == wanted || short == wanted || base == wanted
}

// ---- text ----------------------------------------------------------------

impl fmt::Display for PacketTrace {
    /// One indented block: a heading line, then one line per event.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "packet {}", self.packet)?;
        if self.copy > 0 {
            write!(f, " copy {}", self.copy)?;
        }
        if let Some(s) = &self.switch {
            write!(f, " on {s}")?;
        }
        writeln!(f)?;
        for e in &self.events {
            let indent = match e {
                Event::Arrive { .. } | Event::Pass { .. } | Event::Depart { .. } => "  ",
                _ => "    ",
            };
            writeln!(f, "{indent}{e}")?;
        }
        Ok(())
    }
}

fn fields(list: &[Field]) -> String {
    let items: Vec<String> = list
        .iter()
        .map(|x| format!("{}={}", x.name, x.value))
        .collect();
    items.join(" ")
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Arrive {
                port,
                time_ns,
                bytes,
            } => {
                write!(f, "arrive port {port} at {time_ns} ns, {bytes} B")
            }
            Event::Pass {
                stage,
                instance_type,
            } => {
                let s = match stage {
                    Stage::Ingress => "ingress",
                    Stage::Egress => "egress",
                };
                write!(f, "{s} pass (instance type {instance_type})")
            }
            Event::ParserState { parser, state } => write!(f, "parser {parser}: state {state}"),
            Event::Extract { header, fields: fs } => write!(f, "extract {header} {}", fields(fs)),
            Event::ParserError { error } => write!(f, "parser error {error}"),
            Event::Table {
                table,
                key,
                hit,
                entry,
                action,
                params,
            } => {
                write!(f, "table {table} key [{}] ", fields(key))?;
                match entry {
                    Some(e) => write!(
                        f,
                        "hit entry [{}] priority {}",
                        e.matches.join(", "),
                        e.priority
                    )?,
                    None if *hit => write!(f, "hit")?,
                    None => write!(f, "miss")?,
                }
                write!(f, " -> {action}({})", fields(params))
            }
            Event::Extern {
                call,
                object,
                index,
                value,
            } => {
                write!(f, "{call}")?;
                if let Some(o) = object {
                    write!(f, " {o}")?;
                }
                if let Some(i) = index {
                    write!(f, "[{i}]")?;
                }
                if let Some(v) = value {
                    write!(f, " = {v}")?;
                }
                Ok(())
            }
            Event::Drop { reason } => write!(f, "DROP ({reason})"),
            Event::Enqueue {
                copy,
                ingress_port,
                egress_port,
                priority,
                pg,
                lossless,
                queue,
                charged_bytes,
                pg_shared_bytes,
                pg_headroom_bytes,
                shared_used_bytes,
                headroom_used_bytes,
                queue_depth_bytes,
                queue_depth_packets,
                egress_paused,
            } => {
                write!(
                    f,
                    "tm enqueue copy {copy}: priority {priority} -> ingress port {ingress_port} pg {pg} ({}), egress port {egress_port} queue {queue} depth {queue_depth_bytes} B / {queue_depth_packets} pkts; charged {charged_bytes} B, pg shared {pg_shared_bytes} B headroom {pg_headroom_bytes} B, pool shared {shared_used_bytes} B headroom {headroom_used_bytes} B",
                    if *lossless { "lossless" } else { "lossy" }
                )?;
                if *egress_paused {
                    write!(f, "; egress priority PAUSED")?;
                }
                Ok(())
            }
            Event::Pfc { port, pg, xoff } => write!(
                f,
                "pfc {} on port {port} pg {pg}",
                if *xoff { "XOFF" } else { "XON" }
            ),
            Event::TmDrop { reason } => write!(f, "tm DROP ({reason})"),
            Event::Dequeue {
                copy,
                egress_port,
                queue,
                time_ns,
                queued_ns,
                paused_ns,
                queue_depth_bytes,
            } => write!(
                f,
                "tm dequeue copy {copy}: port {egress_port} queue {queue} at {time_ns} ns after {queued_ns} ns queued ({paused_ns} ns paused), {queue_depth_bytes} B left"
            ),
            Event::Ecn {
                depth_bytes,
                kmin_bytes,
                kmax_bytes,
                probability,
                marked,
            } => write!(
                f,
                "ecn depth {depth_bytes} B kmin {kmin_bytes} B kmax {kmax_bytes} B p {probability:.3}: {}",
                if *marked { "marked CE" } else { "not marked" }
            ),
            Event::Deparse {
                headers,
                bytes,
                changed,
            } => {
                write!(
                    f,
                    "deparse [{}] {bytes} B, {} bytes changed",
                    headers.join(", "),
                    changed.len()
                )?;
                for c in changed.iter().take(16) {
                    let b = |x: Option<u8>| x.map_or("--".to_string(), |v| format!("{v:02x}"));
                    write!(f, " @{}:{}->{}", c.offset, b(c.before), b(c.after))?;
                }
                Ok(())
            }
            Event::Depart {
                port,
                time_ns,
                bytes,
            } => {
                write!(f, "depart port {port} at {time_ns} ns, {bytes} B")
            }
        }
    }
}

/// Bytes that differ between the arriving and the leaving frame.
pub fn byte_changes(before: &[u8], after: &[u8]) -> Vec<ByteChange> {
    let n = before.len().max(after.len());
    (0..n)
        .filter_map(|i| {
            let (b, a) = (before.get(i).copied(), after.get(i).copied());
            (b != a).then_some(ByteChange {
                offset: i as u32,
                before: b,
                after: a,
            })
        })
        .collect()
}
