//! Protobuf messages and tonic gRPC stubs for the P4Runtime subset
//! (`p4.v1`, `p4.config.v1`, `google.rpc`) and roceswitch's own fabric QoS
//! service (`roceswitch.fabric.v1`).
//!
//! The `.proto` files under `proto/` were written for this project from the
//! P4Runtime field numbers (reference `p4runtime-subset.md` §1.3): the wire
//! contract is the numbers and types. `build.rs` compiles them with `protox`
//! (pure Rust, no protoc) and generates code with `tonic-prost-build`,
//! whose clients and servers use [`codec::BytesCodec`].
//!
//! [`p4info_from_text`] parses a P4Info in protobuf text format, the form
//! `p4c --p4runtime-files x.p4info.txt` and our compiler write.

#![allow(missing_docs, unreachable_pub, clippy::all)]

pub mod codec;

/// `google.rpc`: `Status` and `Code`.
pub mod google {
    /// `google.rpc`.
    pub mod rpc {
        include!(concat!(env!("OUT_DIR"), "/google.rpc.rs"));
    }
}

/// `p4.v1` and `p4.config.v1`.
pub mod p4 {
    /// `p4.v1`: the P4Runtime service and its messages.
    pub mod v1 {
        include!(concat!(env!("OUT_DIR"), "/p4.v1.rs"));
    }
    /// `p4.config`.
    pub mod config {
        /// `p4.config.v1`: the P4Info.
        pub mod v1 {
            include!(concat!(env!("OUT_DIR"), "/p4.config.v1.rs"));
        }
    }
}

/// `roceswitch.fabric.v1`: the fabric QoS service.
pub mod roceswitch {
    /// `roceswitch.fabric`.
    pub mod fabric {
        /// `roceswitch.fabric.v1`.
        pub mod v1 {
            include!(concat!(env!("OUT_DIR"), "/roceswitch.fabric.v1.rs"));
        }
    }
}

/// The encoded `FileDescriptorSet` of every file above (well-known types included).
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/descriptors.bin"));

/// Why a text-format P4Info could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TextFormatError {
    /// The embedded descriptor set is unusable (a build problem).
    #[error("descriptor set: {0}")]
    Descriptors(String),
    /// The text is not a valid `p4.config.v1.P4Info`.
    #[error("P4Info text format: {0}")]
    Parse(String),
    /// Re-decoding the parsed message failed.
    #[error("P4Info decode: {0}")]
    Decode(#[from] prost::DecodeError),
}

/// Parses a `p4.config.v1.P4Info` written in protobuf text format.
pub fn p4info_from_text(text: &str) -> Result<p4::config::v1::P4Info, TextFormatError> {
    use prost::Message;
    let pool = prost_reflect::DescriptorPool::decode(FILE_DESCRIPTOR_SET)
        .map_err(|e| TextFormatError::Descriptors(e.to_string()))?;
    let desc = pool
        .get_message_by_name("p4.config.v1.P4Info")
        .ok_or_else(|| TextFormatError::Descriptors("p4.config.v1.P4Info missing".into()))?;
    let msg = prost_reflect::DynamicMessage::parse_text_format(desc, text)
        .map_err(|e| TextFormatError::Parse(e.to_string()))?;
    Ok(p4::config::v1::P4Info::decode(
        msg.encode_to_vec().as_slice(),
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    const P4INFO_TEXT: &str = r#"
pkg_info { arch: "v1model" }
tables {
  preamble { id: 33554433 name: "MyIngress.ipv4_lpm" alias: "ipv4_lpm" }
  match_fields { id: 1 name: "hdr.ipv4.dstAddr" bitwidth: 32 match_type: LPM }
  action_refs { id: 16777217 }
  action_refs { id: 16777218 annotations: "@defaultonly" scope: DEFAULT_ONLY }
  size: 1024
}
actions {
  preamble { id: 16777217 name: "MyIngress.fwd" alias: "fwd" }
  params { id: 1 name: "port" bitwidth: 9 }
}
type_info { }
"#;

    #[test]
    fn text_format_p4info_parses_with_ids_and_enums() {
        let info = p4info_from_text(P4INFO_TEXT).unwrap();
        assert_eq!(info.tables.len(), 1);
        let t = &info.tables[0];
        assert_eq!(t.preamble.as_ref().unwrap().id, 0x0200_0001);
        assert_eq!(t.match_fields[0].bitwidth, 32);
        assert_eq!(
            t.match_fields[0].r#match,
            Some(p4::config::v1::match_field::Match::MatchType(
                p4::config::v1::match_field::MatchType::Lpm as i32
            ))
        );
        assert_eq!(
            t.action_refs[1].scope,
            p4::config::v1::action_ref::Scope::DefaultOnly as i32
        );
        assert_eq!(info.actions[0].params[0].name, "port");
    }

    #[test]
    fn text_format_rejects_unknown_fields() {
        let err = p4info_from_text("tables { no_such_field: 1 }").unwrap_err();
        assert!(err.to_string().contains("no_such_field"), "{err}");
    }

    #[test]
    fn uint128_wire_field_numbers() {
        // high = field 1 (varint tag 0x08), low = field 2 (tag 0x10).
        let v = p4::v1::Uint128 { high: 1, low: 2 };
        assert_eq!(v.encode_to_vec(), vec![0x08, 0x01, 0x10, 0x02]);
        // WriteRequest.election_id is field 3 (length-delimited tag 0x1a).
        let w = p4::v1::WriteRequest {
            election_id: Some(v),
            ..Default::default()
        };
        assert_eq!(&w.encode_to_vec()[..2], &[0x1a, 0x04]);
    }
}
