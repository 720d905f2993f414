//! `roceperf frame` and `roceperf decode` as a user runs them (no root, no
//! network): frames built from flags decode back to those flags, a pcap
//! holds `--count` frames with counting PSNs, inconsistent flags and bad
//! frames are refused with the reason, and the lab switch's verdict is the
//! program's classification (DSCP 26 → lossless priority 3, CNP DSCP 48 →
//! priority 6, TTL 1 dropped, RoCE v1 switched by its PCP).

use std::process::{Command, Output};

use dataplane::wire::roce_frame::decode;
use lab::perf::frame::{parse_hex, read_pcap, to_hex, write_pcap};
use serde_json::Value;

fn roceperf(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roceperf"))
        .args(args)
        .output()
        .expect("running roceperf")
}

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "roceperf failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn frame_hex(flags: &[&str]) -> String {
    let mut args = vec!["frame"];
    args.extend_from_slice(flags);
    args.push("--hex");
    stdout(&roceperf(&args)).trim().to_string()
}

fn decode_json(hex: &str) -> Value {
    let out = stdout(&roceperf(&["decode", "--json", "--hex", hex]));
    serde_json::from_str(out.trim()).unwrap()
}

#[test]
fn flags_round_trip_through_decode() {
    let h = frame_hex(&[
        "--opcode",
        "RDMA_WRITE_FIRST",
        "--qpn",
        "0xabcdef",
        "--psn",
        "0xfffffe",
        "--va",
        "0x1000",
        "--rkey",
        "77",
        "--dma-len",
        "4096",
        "--payload-len",
        "1000",
        "--src-ip",
        "fd00::1",
        "--dst-ip",
        "fd00::2",
        "--vlan",
        "10",
        "--pcp",
        "2",
        "--ack-req",
    ]);
    let j = decode_json(&h);
    assert_eq!(j["version"], "v2");
    assert_eq!(j["src_ip"], "fd00::1");
    assert_eq!(j["vlan"]["vid"], 10);
    assert_eq!(j["vlan"]["pcp"], 2);
    assert_eq!(j["bth"]["opcode_name"], "RC RDMA_WRITE_FIRST (0x06)");
    assert_eq!(j["bth"]["dest_qp"], 0xabcdef);
    assert_eq!(j["bth"]["psn"], 0xfffffe);
    assert_eq!(j["bth"]["ack_req"], true);
    assert_eq!(j["reth"]["va"], 0x1000);
    assert_eq!(j["reth"]["rkey"], 77);
    assert_eq!(j["reth"]["dma_len"], 4096);
    assert_eq!(j["payload_len"], 1000);
    assert_eq!(j["icrc"]["valid"], true);
    assert_eq!(j["ipv6"]["payload_len"], 8 + 12 + 16 + 1000 + 4);

    // Text output names every header and the checks.
    let text = stdout(&roceperf(&["decode", "--hex", &h]));
    for want in [
        "802.1Q    VID 10 PCP 2",
        "IPv6      fd00::1 -> fd00::2",
        "RETH      VA 0x1000",
        "ICRC      ",
        "valid",
    ] {
        assert!(text.contains(want), "{want:?} missing from\n{text}");
    }
}

#[test]
fn pcap_holds_count_frames_with_counting_psns() {
    let dir = std::env::temp_dir().join(format!("roceperf-frame-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("burst.pcap");
    let p = path.to_str().unwrap();
    let o = roceperf(&[
        "frame",
        "--opcode",
        "SEND_MIDDLE",
        "--psn",
        "0xfffffe",
        "--payload-len",
        "64",
        "--count",
        "4",
        "--pcap",
        p,
    ]);
    stdout(&o);
    let frames = read_pcap(&path).unwrap();
    assert_eq!(frames.len(), 4);
    let psns: Vec<u32> = frames.iter().map(|f| decode(f).unwrap().spec.psn).collect();
    assert_eq!(psns, [0xfffffe, 0xffffff, 0, 1], "PSNs wrap at 2^24");
    assert!(frames.iter().all(|f| decode(f).unwrap().icrc.ok()));
    // decode reads the file: one JSON line a frame.
    let out = stdout(&roceperf(&["decode", "--json", "--no-switch", p]));
    assert_eq!(out.lines().count(), 4);
    // The library's writer and reader agree with each other too.
    let again = dir.join("again.pcap");
    write_pcap(&again, &frames).unwrap();
    assert_eq!(read_pcap(&again).unwrap(), frames);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn inconsistent_flags_and_bad_frames_are_refused() {
    let o = roceperf(&["frame", "--opcode", "SEND_ONLY", "--va", "1", "--hex"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("carries no RETH"), "{err}");
    let o = roceperf(&["frame", "--opcode", "ACK", "--payload-len", "4", "--hex"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("carries no payload"));
    let o = roceperf(&["frame", "--opcode", "FETCH_ADD", "--hex"]);
    assert!(!o.status.success());

    let good = parse_hex(&frame_hex(&["--payload-len", "9"])).unwrap();
    // A flipped payload bit: decoded, ICRC reported bad, exit status 1.
    let mut bad = good.clone();
    let n = bad.len();
    bad[n - 6] ^= 1;
    let o = roceperf(&["decode", "--json", "--no-switch", "--hex", &to_hex(&bad)]);
    assert_eq!(o.status.code(), Some(1));
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["icrc"]["valid"], false);
    assert_ne!(j["icrc"]["expected"], j["icrc"]["received"]);
    // Cut short: an error naming what is missing, exit status 1.
    let o = roceperf(&["decode", "--hex", &to_hex(&good[..good.len() - 1])]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains("truncated"));
}

#[test]
fn the_switch_verdict_is_the_programs_classification() {
    let v = |flags: &[&str]| decode_json(&frame_hex(flags))["switch"].clone();
    let data = v(&["--opcode", "RDMA_WRITE_ONLY", "--payload-len", "32"]);
    assert_eq!(data["priority"], 3);
    assert_eq!(data["lossless"], true);
    assert_eq!(data["routed"], true);
    assert_eq!(data["copies"][0]["egress_port"], 1);
    assert_eq!(data["copies"][0]["queue"], 3);
    assert_eq!(data["copies"][0]["drop"], Value::Null);
    let cnp = v(&["--opcode", "CNP", "--dscp", "48", "--ecn", "not-ect"]);
    assert_eq!(cnp["priority"], 6);
    assert_eq!(cnp["lossless"], false);
    assert_eq!(cnp["ecn_capable"], false);
    let ttl = v(&["--ttl", "1"]);
    assert!(
        ttl["copies"][0]["drop"]
            .as_str()
            .unwrap()
            .contains("TTL expired"),
        "{ttl}"
    );
    // RoCE v1 has no DSCP: the switch is asked to trust the PCP.
    let v1 = v(&["--roce", "v1", "--pcp", "3", "--dscp", "0"]);
    assert_eq!(v1["trust"], "Pcp");
    assert_eq!(v1["priority"], 3);
    assert_eq!(v1["lossless"], true);
    assert_eq!(v1["routed"], false);
    assert_eq!(v1["copies"][0]["egress_port"], 1);
    assert_eq!(v1["copies"][0]["queue"], 3);
}

#[test]
fn pcapng_files_and_hex_with_separators_are_read() {
    use pcap_file::DataLink;
    use pcap_file::pcapng::PcapNgWriter;
    use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
    use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionBlock;

    let h = frame_hex(&["--opcode", "CNP", "--qpn", "0x55"]);
    let frame = parse_hex(&h).unwrap();
    // Wireshark's own format.
    let path = std::env::temp_dir().join(format!("roceperf-frame-{}.pcapng", std::process::id()));
    let mut w = PcapNgWriter::new(std::fs::File::create(&path).unwrap()).unwrap();
    w.write_pcapng_block(InterfaceDescriptionBlock {
        linktype: DataLink::ETHERNET,
        snaplen: 0,
        options: Vec::new(),
    })
    .unwrap();
    w.write_pcapng_block(EnhancedPacketBlock {
        interface_id: 0,
        timestamp: std::time::Duration::ZERO,
        original_len: frame.len() as u32,
        data: frame.clone().into(),
        options: Vec::new(),
    })
    .unwrap();
    drop(w);
    assert_eq!(read_pcap(&path).unwrap(), vec![frame.clone()]);
    std::fs::remove_file(&path).unwrap();
    // Hex as tools print it: separators and a 0x prefix.
    let spaced: Vec<String> = frame.iter().map(|b| format!("{b:02X}")).collect();
    assert_eq!(parse_hex(&spaced.join(":")).unwrap(), frame);
    assert_eq!(parse_hex(&format!("0x{h}")).unwrap(), frame);
    assert!(parse_hex("abc").is_err());
    assert!(parse_hex("zz").is_err());
}
