//! Packet-in/packet-out metadata (spec "Packet I/O"): the `packet_out` and
//! `packet_in` controller headers of the program, as described by its
//! `ControllerHeaderInfo`. A packet-out frame for the device is the
//! `packet_out` header (fields in order, big-endian bit packing, padded
//! with zero bits to a byte boundary) followed by the payload; a packet-in
//! frame is parsed the same way with the `packet_in` header. Programs
//! without such a header exchange bare payloads.

use p4_target::info::{ControllerHeaderInfo, ProgramInfo};
use proto::p4::v1 as pb;

use super::bytes::{decode, encode};
use super::error::P4Error;

fn header(info: &ProgramInfo, name: &str) -> Option<&'static ControllerHeaderInfo> {
    info.controller_headers.iter().find(|h| h.name == name)
}

fn header_bytes(h: &ControllerHeaderInfo) -> usize {
    let bits: u32 = h.fields.iter().map(|f| f.bitwidth).sum();
    bits.div_ceil(8) as usize
}

fn put_bits(buf: &mut [u8], mut bit: usize, width: u32, value: u128) {
    for i in (0..width).rev() {
        if (value >> i) & 1 == 1 {
            buf[bit / 8] |= 0x80 >> (bit % 8);
        }
        bit += 1;
    }
}

fn get_bits(buf: &[u8], mut bit: usize, width: u32) -> u128 {
    let mut v = 0u128;
    for _ in 0..width {
        v = (v << 1) | u128::from((buf[bit / 8] >> (7 - bit % 8)) & 1);
        bit += 1;
    }
    v
}

/// Builds the device frame for a PacketOut. Every header field must be
/// given once and fit its width.
pub fn encode_packet_out(info: &ProgramInfo, po: &pb::PacketOut) -> Result<Vec<u8>, P4Error> {
    let Some(h) = header(info, "packet_out") else {
        if let Some(m) = po.metadata.first() {
            return Err(P4Error::invalid(
                "packet.metadata",
                format!(
                    "the program has no packet_out header (got metadata id {})",
                    m.metadata_id
                ),
            ));
        }
        return Ok(po.payload.clone());
    };
    let mut values: Vec<Option<u128>> = vec![None; h.fields.len()];
    for (i, m) in po.metadata.iter().enumerate() {
        let Some(fi) = h.fields.iter().position(|f| f.id == m.metadata_id) else {
            return Err(P4Error::invalid(
                format!("packet.metadata[{i}].metadata_id"),
                format!("unknown packet_out field id {}", m.metadata_id),
            ));
        };
        let f = &h.fields[fi];
        if values[fi].is_some() {
            return Err(P4Error::invalid(
                format!("packet.metadata[{i}].metadata_id"),
                format!("duplicate field id {} ({})", f.id, f.name),
            ));
        }
        values[fi] = Some(decode(
            &m.value,
            f.bitwidth,
            format_args!("packet.metadata[{i}] ({}).value", f.name),
        )?);
    }
    if let Some(fi) = values.iter().position(Option::is_none) {
        return Err(P4Error::invalid(
            "packet.metadata",
            format!(
                "missing packet_out field {} ({})",
                h.fields[fi].id, h.fields[fi].name
            ),
        ));
    }
    let mut frame = vec![0u8; header_bytes(h)];
    let mut bit = 0usize;
    for (f, v) in h.fields.iter().zip(values) {
        put_bits(&mut frame, bit, f.bitwidth, v.unwrap_or(0));
        bit += f.bitwidth as usize;
    }
    frame.extend_from_slice(&po.payload);
    Ok(frame)
}

/// Splits a packet-in frame from the device into metadata and payload.
pub fn decode_packet_in(info: &ProgramInfo, frame: &[u8]) -> Result<pb::PacketIn, P4Error> {
    let Some(h) = header(info, "packet_in") else {
        return Ok(pb::PacketIn {
            payload: frame.to_vec(),
            metadata: vec![],
        });
    };
    let n = header_bytes(h);
    if frame.len() < n {
        return Err(P4Error::new(
            tonic::Code::Internal,
            format!(
                "packet-in frame of {} bytes is shorter than the packet_in header ({n})",
                frame.len()
            ),
        ));
    }
    let mut bit = 0usize;
    let metadata = h
        .fields
        .iter()
        .map(|f| {
            let v = get_bits(frame, bit, f.bitwidth);
            bit += f.bitwidth as usize;
            pb::PacketMetadata {
                metadata_id: f.id,
                value: encode(v),
            }
        })
        .collect();
    Ok(pb::PacketIn {
        payload: frame[n..].to_vec(),
        metadata,
    })
}

/// Whether packet-in `pi` passes a role's packet-in filter (§5.2;
/// `stratum.P4RoleConfig.packet_in_filter`): metadata field `id` carries
/// `value`. No filter passes everything.
pub fn passes(pi: &pb::PacketIn, filter: Option<(u32, u128)>) -> bool {
    let Some((id, value)) = filter else {
        return true;
    };
    pi.metadata.iter().any(|m| {
        m.metadata_id == id && decode(&m.value, 128, "packet_in filter").ok() == Some(value)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use p4_target::info::MetaFieldInfo;

    static OUT_FIELDS: [MetaFieldInfo; 2] = [
        MetaFieldInfo {
            id: 1,
            name: "egress_port",
            bitwidth: 9,
            signed: false,
        },
        MetaFieldInfo {
            id: 2,
            name: "_pad",
            bitwidth: 7,
            signed: false,
        },
    ];
    static IN_FIELDS: [MetaFieldInfo; 1] = [MetaFieldInfo {
        id: 1,
        name: "ingress_port",
        bitwidth: 9,
        signed: false,
    }];
    static HEADERS: [ControllerHeaderInfo; 2] = [
        ControllerHeaderInfo {
            id: 0x0400_0001,
            name: "packet_out",
            fields: &OUT_FIELDS,
        },
        ControllerHeaderInfo {
            id: 0x0400_0002,
            name: "packet_in",
            fields: &IN_FIELDS,
        },
    ];
    static INFO: ProgramInfo = ProgramInfo {
        name: "pio",
        controller_headers: &HEADERS,
        ..ProgramInfo::EMPTY
    };

    #[test]
    fn packet_out_header_is_bit_packed_in_field_order() {
        let po = pb::PacketOut {
            payload: vec![0xaa, 0xbb],
            metadata: vec![
                pb::PacketMetadata {
                    metadata_id: 2,
                    value: vec![0],
                },
                pb::PacketMetadata {
                    metadata_id: 1,
                    value: vec![0, 3],
                },
            ],
        };
        // port 3 in 9 bits then 7 zero bits: 0000_0001 1000_0000.
        assert_eq!(
            encode_packet_out(&INFO, &po).unwrap(),
            vec![0x01, 0x80, 0xaa, 0xbb]
        );
    }

    #[test]
    fn packet_out_errors_name_the_field() {
        let missing = pb::PacketOut {
            payload: vec![],
            metadata: vec![pb::PacketMetadata {
                metadata_id: 1,
                value: vec![1],
            }],
        };
        assert!(
            encode_packet_out(&INFO, &missing)
                .unwrap_err()
                .message
                .contains("_pad")
        );
        let wide = pb::PacketOut {
            payload: vec![],
            metadata: vec![
                pb::PacketMetadata {
                    metadata_id: 1,
                    value: vec![2, 0],
                },
                pb::PacketMetadata {
                    metadata_id: 2,
                    value: vec![0],
                },
            ],
        };
        assert!(
            encode_packet_out(&INFO, &wide)
                .unwrap_err()
                .message
                .contains("egress_port")
        );
    }

    #[test]
    fn packet_in_header_decodes_to_canonical_metadata() {
        // ingress_port 0x101 in 9 bits, padded to 2 bytes: 1000_0000 1000_0000.
        let pi = decode_packet_in(&INFO, &[0x80, 0x80, 1, 2, 3]).unwrap();
        assert_eq!(pi.payload, vec![1, 2, 3]);
        assert_eq!(
            pi.metadata,
            vec![pb::PacketMetadata {
                metadata_id: 1,
                value: vec![1, 1]
            }]
        );
        assert!(decode_packet_in(&INFO, &[0x80]).is_err());
    }
}
