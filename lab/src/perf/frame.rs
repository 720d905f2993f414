//! The I/O and the words around `roceperf frame` and `roceperf decode`:
//! frames to and from pcap files (`pcap-file`; classic pcap with Ethernet
//! link type, which Wireshark and scapy open; pcapng is read too) and hex,
//! and a decoded frame ([`dataplane::wire::roce_frame::Decoded`]) with the
//! switch's verdict ([`super::verdict`]) as text or JSON.
//!
//! Contract: building and decoding are the dataplane's
//! ([`dataplane::wire::roce_frame`]); this module adds files, formats and
//! nothing else. Errors are `anyhow` with the file named.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read};
use std::net::IpAddr;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use dataplane::fabric::config::Trust;
use dataplane::wire::ib::AethRepr;
use dataplane::wire::roce_frame::{Decoded, NetHeader, OpcodeName, PayloadPattern, RoceVersion};
use pcap_file::DataLink;
use pcap_file::pcap::{PcapPacket, PcapReader, PcapWriter};
use pcap_file::pcapng::{Block, PcapNgReader};
use serde_json::{Value, json};

use super::verdict::SwitchVerdict;

/// Writes `frames` to a classic pcap file (Ethernet, microseconds), one
/// microsecond apart.
pub fn write_pcap(path: &Path, frames: &[Vec<u8>]) -> Result<()> {
    let file = File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut w = PcapWriter::new(BufWriter::new(file))
        .with_context(|| format!("writing {}", path.display()))?;
    for (i, f) in frames.iter().enumerate() {
        let len = u32::try_from(f.len()).context("frame longer than 4 GiB")?;
        w.write_packet(&PcapPacket::new(Duration::from_micros(i as u64), len, f))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    std::io::Write::flush(&mut w.into_writer())
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// Reads every frame of a pcap or pcapng file with Ethernet link type.
pub fn read_pcap(path: &Path) -> Result<Vec<Vec<u8>>> {
    let mut bytes = Vec::new();
    File::open(path)
        .and_then(|f| BufReader::new(f).read_to_end(&mut bytes))
        .with_context(|| format!("reading {}", path.display()))?;
    let ctx = || format!("{} is not a readable pcap/pcapng file", path.display());
    let mut frames = Vec::new();
    if bytes.starts_with(&[0x0a, 0x0d, 0x0d, 0x0a]) {
        let mut r = PcapNgReader::new(&bytes[..]).with_context(ctx)?;
        // Link type by interface id, from the interface description blocks.
        let mut links = Vec::new();
        while let Some(block) = r.next_block() {
            match block.with_context(ctx)? {
                Block::InterfaceDescription(i) => links.push(i.linktype),
                Block::EnhancedPacket(p) => {
                    let link = links.get(p.interface_id as usize).copied();
                    if link.is_some_and(|l| l != DataLink::ETHERNET) {
                        bail!("{}: link type {link:?}, not Ethernet", path.display());
                    }
                    frames.push(p.data.into_owned());
                }
                Block::SimplePacket(p) => frames.push(p.data.into_owned()),
                _ => {}
            }
        }
    } else {
        let mut r = PcapReader::new(&bytes[..]).with_context(ctx)?;
        let link = r.header().datalink;
        if link != DataLink::ETHERNET {
            bail!("{}: link type {link:?}, not Ethernet", path.display());
        }
        while let Some(p) = r.next_packet() {
            frames.push(p.with_context(ctx)?.data.into_owned());
        }
    }
    Ok(frames)
}

/// Bytes from hex: whitespace, `:` and `-` separators and a `0x` prefix
/// are ignored.
pub fn parse_hex(s: &str) -> Result<Vec<u8>> {
    let s = s.trim();
    let s = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    let digits: Vec<u8> = s
        .bytes()
        .filter(|b| !(b.is_ascii_whitespace() || *b == b':' || *b == b'-'))
        .collect();
    if !digits.len().is_multiple_of(2) {
        bail!("odd number of hex digits ({})", digits.len());
    }
    digits
        .chunks(2)
        .map(|c| {
            std::str::from_utf8(c)
                .ok()
                .and_then(|d| u8::from_str_radix(d, 16).ok())
                .with_context(|| format!("`{}` is not a hex byte", String::from_utf8_lossy(c)))
        })
        .collect()
}

/// Lower-case hex, no separators.
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn mac(m: &[u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn ok(b: bool) -> &'static str {
    if b { "valid" } else { "BAD" }
}

fn aeth_text(a: &AethRepr) -> String {
    format!(
        "syndrome {:#04x} ({:?}), MSN {}",
        a.syndrome,
        a.kind(),
        a.msn
    )
}

/// The trust a decode uses when none is asked for: PCP for RoCE v1 (no
/// DSCP to trust), the lab's DSCP otherwise.
pub fn default_trust(d: &Decoded) -> Trust {
    match d.spec.version {
        RoceVersion::V1 => Trust::Pcp,
        RoceVersion::V2 => Trust::Dscp,
    }
}

/// A decoded frame as indented text lines, one header a block.
pub fn describe(d: &Decoded) -> Vec<String> {
    let s = &d.spec;
    let mut l = Vec::new();
    l.push(format!(
        "Ethernet  {} -> {}",
        mac(&s.src_mac),
        mac(&s.dst_mac)
    ));
    if let Some(v) = s.vlan {
        l.push(format!(
            "802.1Q    VID {} PCP {} DEI {}",
            v.vid,
            v.pcp,
            u8::from(d.vlan_dei)
        ));
    }
    let tc = format!("DSCP {} ECN {:?}", s.dscp, s.ecn);
    match d.net {
        NetHeader::Ipv4 {
            header_len,
            total_len,
            ident,
            dont_frag,
            checksum,
        } => {
            l.push(format!(
                "IPv4      {} -> {}  {tc} TTL {}  len {total_len} id {ident}{}{}",
                s.src_ip,
                s.dst_ip,
                s.ttl,
                if dont_frag { " DF" } else { "" },
                if header_len > 20 {
                    format!(" IHL {header_len}")
                } else {
                    String::new()
                }
            ));
            l.push(format!(
                "          header checksum {:#06x} {}{}",
                checksum.received,
                ok(checksum.ok()),
                if checksum.ok() {
                    String::new()
                } else {
                    format!(" (expected {:#06x})", checksum.expected)
                }
            ));
        }
        NetHeader::Ipv6 { payload_len } => l.push(format!(
            "IPv6      {} -> {}  {tc} hop limit {} flow label {:#07x}  payload {payload_len}",
            s.src_ip, s.dst_ip, s.ttl, s.flow_label
        )),
        NetHeader::Grh { payload_len } => {
            let gid = |a: IpAddr| match a {
                IpAddr::V4(v4) => v4.to_ipv6_mapped().to_string(),
                IpAddr::V6(v6) => v6.to_string(),
            };
            l.push(format!(
                "GRH       {} -> {}  {tc} hop limit {} flow label {:#07x}  payload {payload_len}",
                gid(s.src_ip),
                gid(s.dst_ip),
                s.ttl,
                s.flow_label
            ));
        }
    }
    if let Some(u) = d.udp {
        l.push(format!(
            "UDP       {} -> {}  len {} checksum {:#06x}",
            s.udp_src_port, u.dst_port, u.len, u.checksum
        ));
    }
    l.push(format!(
        "BTH       {}  QPN {:#08x} PSN {}  AckReq {} SE {} M {} PadCnt {} TVer {}  P_Key {:#06x}  FECN {} BECN {}",
        OpcodeName(s.opcode),
        s.dest_qp,
        s.psn,
        u8::from(s.ack_req),
        u8::from(s.solicited),
        u8::from(s.migreq),
        d.pad_count,
        d.tver,
        s.pkey,
        u8::from(s.fecn),
        u8::from(s.becn)
    ));
    if let Some(r) = s.reth {
        l.push(format!(
            "RETH      VA {:#x} R_Key {:#010x} DMA length {}",
            r.virtual_addr, r.rkey, r.dma_len
        ));
    }
    if let Some(a) = s.aeth {
        l.push(format!("AETH      {}", aeth_text(&a)));
    }
    if let Some(i) = s.immdt {
        l.push(format!("ImmDt     {i:#010x}"));
    }
    l.push(format!(
        "Payload   {} bytes at offset {}{}",
        s.payload_len,
        d.payload_offset,
        match d.payload_pattern {
            _ if s.payload_len == 0 => String::new(),
            Some(PayloadPattern::Counting) => ", counting 00 01 02 ...".into(),
            Some(PayloadPattern::Fill(b)) => format!(", every byte {b:#04x}"),
            None => String::new(),
        }
    ));
    l.push(format!(
        "ICRC      {:#010x} {}{}",
        d.icrc.received,
        ok(d.icrc.ok()),
        if d.icrc.ok() {
            String::new()
        } else {
            format!(" (expected {:#010x})", d.icrc.expected)
        }
    ));
    l.push(format!(
        "Frame     {} bytes{}",
        d.frame_len,
        if d.trailing_len > 0 {
            format!(" + {} bytes of padding after it", d.trailing_len)
        } else {
            String::new()
        }
    ));
    l
}

/// The switch's verdict as text lines.
pub fn describe_verdict(v: &SwitchVerdict) -> Vec<String> {
    let mut l = Vec::new();
    let opt = |o: Option<u8>| o.map_or("-".to_string(), |x| x.to_string());
    l.push(format!(
        "Switch    (lab default QoS, trust {:?}, lossless priorities {:?})",
        v.trust, v.lossless_priorities
    ));
    l.push(format!(
        "          ingress priority {} PG {}: {}; {}; {}",
        opt(v.priority),
        opt(v.pg),
        match v.lossless {
            Some(true) => "lossless (PFC)",
            Some(false) => "lossy",
            None => "not classified",
        },
        if v.ecn_capable {
            "ECN-capable"
        } else {
            "not ECN-capable"
        },
        if v.routed { "routed" } else { "switched (L2)" }
    ));
    for c in &v.copies {
        let fate = match (&c.drop, c.egress_port) {
            (Some(r), _) => format!("dropped: {r}"),
            (None, Some(p)) => format!(
                "out port {p} queue {}{}{}",
                opt(c.queue),
                match c.ce_marked {
                    Some(true) => ", CE marked",
                    Some(false) => ", not marked",
                    None => "",
                },
                c.out_bytes
                    .map_or(String::new(), |b| format!(", {b} bytes"))
            ),
            (None, None) => "no egress".into(),
        };
        l.push(format!("          copy {}: {fate}", c.copy));
    }
    let path: Vec<String> = v
        .tables
        .iter()
        .map(|(t, a, hit)| {
            let t = t.rsplit('.').next().unwrap_or(t);
            let a = a.rsplit('.').next().unwrap_or(a);
            format!("{t}{}{a}", if *hit { " -> " } else { " (miss) -> " })
        })
        .collect();
    if !path.is_empty() {
        l.push(format!("          tables: {}", path.join(", ")));
    }
    l
}

/// A decoded frame (and verdict) as one JSON object.
pub fn to_json(index: usize, d: &Decoded, v: Option<&SwitchVerdict>) -> Value {
    let s = &d.spec;
    let mut j = json!({
        "frame": index,
        "version": match s.version { RoceVersion::V1 => "v1", RoceVersion::V2 => "v2" },
        "frame_len": d.frame_len,
        "trailing_len": d.trailing_len,
        "eth": { "src": mac(&s.src_mac), "dst": mac(&s.dst_mac) },
        "vlan": s.vlan.map(|t| json!({ "vid": t.vid, "pcp": t.pcp, "dei": d.vlan_dei })),
        "src_ip": s.src_ip.to_string(),
        "dst_ip": s.dst_ip.to_string(),
        "dscp": s.dscp,
        "ecn": format!("{:?}", s.ecn),
        "ttl": s.ttl,
        "flow_label": s.flow_label,
        "bth": {
            "opcode": u8::from(s.opcode),
            "opcode_name": OpcodeName(s.opcode).to_string(),
            "dest_qp": s.dest_qp,
            "psn": s.psn,
            "ack_req": s.ack_req,
            "solicited": s.solicited,
            "migreq": s.migreq,
            "pad_count": d.pad_count,
            "tver": d.tver,
            "pkey": s.pkey,
            "fecn": s.fecn,
            "becn": s.becn,
        },
        "reth": s.reth.map(|r| json!({ "va": r.virtual_addr, "rkey": r.rkey, "dma_len": r.dma_len })),
        "aeth": s.aeth.map(|a| json!({ "syndrome": a.syndrome, "msn": a.msn })),
        "immdt": s.immdt,
        "payload_len": s.payload_len,
        "payload_offset": d.payload_offset,
        "icrc": { "received": d.icrc.received, "expected": d.icrc.expected, "valid": d.icrc.ok() },
    });
    match d.net {
        NetHeader::Ipv4 {
            header_len,
            total_len,
            ident,
            dont_frag,
            checksum,
        } => {
            j["ipv4"] = json!({
                "header_len": header_len, "total_len": total_len, "ident": ident,
                "dont_frag": dont_frag,
                "checksum": { "received": checksum.received, "expected": checksum.expected, "valid": checksum.ok() },
            });
        }
        NetHeader::Ipv6 { payload_len } => j["ipv6"] = json!({ "payload_len": payload_len }),
        NetHeader::Grh { payload_len } => j["grh"] = json!({ "payload_len": payload_len }),
    }
    if let Some(u) = d.udp {
        j["udp"] = json!({ "src_port": s.udp_src_port, "dst_port": u.dst_port, "len": u.len, "checksum": u.checksum });
    }
    if let Some(v) = v {
        j["switch"] = json!({
            "trust": format!("{:?}", v.trust),
            "priority": v.priority,
            "pg": v.pg,
            "lossless": v.lossless,
            "lossless_priorities": v.lossless_priorities,
            "ecn_capable": v.ecn_capable,
            "routed": v.routed,
            "copies": v.copies.iter().map(|c| json!({
                "copy": c.copy, "egress_port": c.egress_port, "queue": c.queue,
                "ce_marked": c.ce_marked, "drop": c.drop, "out_bytes": c.out_bytes,
            })).collect::<Vec<_>>(),
            "tables": v.tables.iter().map(|(t, a, h)| json!({ "table": t, "action": a, "hit": h })).collect::<Vec<_>>(),
        });
    }
    j
}
