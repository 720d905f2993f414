//! v1model's `standard_metadata_t` and the architecture's hidden state.
//!
//! Field names and widths follow `p4/include/v1model.p4`; every field is a
//! native integer masked to its width. The `pub` fields after the v1model
//! ones carry what bmv2 keeps in hidden intrinsic metadata: clone, resubmit
//! and recirculate requests, truncation, and the clock the meters use.

/// The drop port: `mark_to_drop` sets `egress_spec` to it (v1model, bmv2).
pub const DROP_PORT: u16 = 511;

/// Values of `standard_metadata.instance_type` (bmv2 `PKT_INSTANCE_TYPE_*`).
pub mod instance_type {
    /// A packet received from a port.
    pub const NORMAL: u32 = 0;
    /// Ingress-to-egress clone.
    pub const INGRESS_CLONE: u32 = 1;
    /// Egress-to-egress clone.
    pub const EGRESS_CLONE: u32 = 2;
    /// Coalesced (unused).
    pub const COALESCED: u32 = 3;
    /// Recirculated.
    pub const RECIRC: u32 = 4;
    /// Multicast replica.
    pub const REPLICATION: u32 = 5;
    /// Resubmitted.
    pub const RESUBMIT: u32 = 6;
}

/// Codes of the `error` values declared in `core.p4`, in declaration order
/// (p4c and bmv2 number them the same way); program-declared errors follow.
pub mod error_code {
    /// No error.
    pub const NO_ERROR: u32 = 0;
    /// Not enough bits in the packet for `extract`.
    pub const PACKET_TOO_SHORT: u32 = 1;
    /// `select` matched no case.
    pub const NO_MATCH: u32 = 2;
    /// Header stack index out of bounds.
    pub const STACK_OUT_OF_BOUNDS: u32 = 3;
    /// Varbit extraction longer than the field.
    pub const HEADER_TOO_SHORT: u32 = 4;
    /// Parser ran too long.
    pub const PARSER_TIMEOUT: u32 = 5;
    /// Invalid argument (e.g. varbit length not a multiple of 8).
    pub const PARSER_INVALID_ARGUMENT: u32 = 6;
}

/// Which clone a program asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloneType {
    /// `CloneType.I2E`.
    IngressToEgress,
    /// `CloneType.E2E`.
    EgressToEgress,
}

/// A pending `clone`/`clone_preserving_field_list` call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CloneRequest {
    /// I2E or E2E.
    pub kind: CloneType,
    /// Clone session id.
    pub session: u32,
    /// `@field_list` index whose user-metadata fields travel with the clone.
    pub field_list: Option<u8>,
}

/// `standard_metadata_t` plus the architecture's hidden fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StandardMetadata {
    /// `bit<9> ingress_port`.
    pub ingress_port: u16,
    /// `bit<9> egress_spec`: set by ingress, the port the TM sends to.
    pub egress_spec: u16,
    /// `bit<9> egress_port`: the port this egress instance sends on.
    pub egress_port: u16,
    /// `bit<32> instance_type`, see [`instance_type`].
    pub instance_type: u32,
    /// `bit<32> packet_length` in bytes.
    pub packet_length: u32,
    /// `bit<32> enq_timestamp`: µs when enqueued in the TM.
    pub enq_timestamp: u32,
    /// `bit<19> enq_qdepth`: queue depth in packets at enqueue.
    pub enq_qdepth: u32,
    /// `bit<32> deq_timedelta`: µs spent in the queue.
    pub deq_timedelta: u32,
    /// `bit<19> deq_qdepth`: queue depth in packets at dequeue.
    pub deq_qdepth: u32,
    /// `bit<48> ingress_global_timestamp` in µs.
    pub ingress_global_timestamp: u64,
    /// `bit<48> egress_global_timestamp` in µs.
    pub egress_global_timestamp: u64,
    /// `bit<16> mcast_grp`: non-zero sends to a multicast group.
    pub mcast_grp: u16,
    /// `bit<16> egress_rid`: replica id of a multicast copy.
    pub egress_rid: u16,
    /// `bit<1> checksum_error`: set by `verify_checksum`.
    pub checksum_error: u8,
    /// `error parser_error`, see [`error_code`].
    pub parser_error: u32,
    /// `bit<3> priority`: the egress queue / traffic class.
    pub priority: u8,
    /// Extension (roceswitch): `bit<32> enq_qdepth_bytes`, queue bytes at enqueue.
    pub enq_qdepth_bytes: u32,
    /// Extension (roceswitch): `bit<32> deq_qdepth_bytes`, queue bytes after dequeue.
    pub deq_qdepth_bytes: u32,

    /// Hidden: pending clone request.
    pub clone_request: Option<CloneRequest>,
    /// Hidden: `resubmit_preserving_field_list(n)` was called.
    pub resubmit: Option<u8>,
    /// Hidden: `recirculate_preserving_field_list(n)` was called.
    pub recirculate: Option<u8>,
    /// Hidden: `truncate(n)`: keep at most n bytes on output.
    pub truncate_len: Option<u32>,
    /// Hidden: the switch clock in ns, for meters and `ingress_global_timestamp`.
    pub now_ns: u64,
}

impl StandardMetadata {
    /// Metadata of a packet arriving on `port` at `now_ns`.
    pub fn arriving(port: u16, packet_length: u32, now_ns: u64) -> Self {
        StandardMetadata {
            ingress_port: port,
            packet_length,
            ingress_global_timestamp: (now_ns / 1000) & crate::bits::mask(48) as u64,
            now_ns,
            ..Default::default()
        }
    }

    /// `mark_to_drop(standard_metadata)`: as bmv2, sets `egress_spec` to the
    /// drop port and clears `mcast_grp`.
    pub fn mark_to_drop(&mut self) {
        self.egress_spec = DROP_PORT;
        self.mcast_grp = 0;
    }
}

/// The name of a v1model `error` value (user-declared errors: `error N`).
pub fn error_name(code: u32) -> std::borrow::Cow<'static, str> {
    let name = match code {
        error_code::NO_ERROR => "NoError",
        error_code::PACKET_TOO_SHORT => "PacketTooShort",
        error_code::NO_MATCH => "NoMatch",
        error_code::STACK_OUT_OF_BOUNDS => "StackOutOfBounds",
        error_code::HEADER_TOO_SHORT => "HeaderTooShort",
        error_code::PARSER_TIMEOUT => "ParserTimeout",
        error_code::PARSER_INVALID_ARGUMENT => "ParserInvalidArgument",
        n => return format!("error {n}").into(),
    };
    name.into()
}
