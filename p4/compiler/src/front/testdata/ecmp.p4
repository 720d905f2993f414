/* ECMP with an action selector, plus the v1model stateful externs:
 * counters, meters, registers, hashes and digests. */
#include <v1model.p4>

typedef bit<48> mac_t;
typedef bit<32> ipv4_t;

header ethernet_t { mac_t dst; mac_t src; bit<16> type; }
header ipv4_h {
    bit<4> version; bit<4> ihl; bit<6> dscp; bit<2> ecn; bit<16> len;
    bit<16> id; bit<3> flags; bit<13> frag; bit<8> ttl; bit<8> protocol;
    bit<16> csum; ipv4_t src; ipv4_t dst;
}
header l4_h { bit<16> sport; bit<16> dport; }

struct headers_t { ethernet_t ethernet; ipv4_h ipv4; l4_h l4; }
struct meta_t {
    bit<14> ecmp_hash;
    bit<2>  color;
    bit<32> seen;
}
struct learn_digest_t { mac_t src; bit<9> port; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.type) {
            0x0800: ipv4;
            default: accept;
        }
    }
    state ipv4 {
        pkt.extract(hdr.ipv4);
        verify(hdr.ipv4.ihl >= 5, error.HeaderTooShort);
        transition select(hdr.ipv4.protocol) {
            6 : l4;
            17: l4;
            default: accept;
        }
    }
    state l4 { pkt.extract(hdr.l4); transition accept; }
}

control VC(inout headers_t hdr, inout meta_t meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
              hdr.ipv4.len, hdr.ipv4.id, hdr.ipv4.flags, hdr.ipv4.frag,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src, hdr.ipv4.dst },
            hdr.ipv4.csum, HashAlgorithm.csum16);
    }
}

control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t standard_metadata) {
    counter(1024, CounterType.packets_and_bytes) port_counter;
    direct_counter(CounterType.packets) route_hits;
    meter(32w256, MeterType.bytes) port_meter;
    direct_meter<bit<2>>(MeterType.packets) acl_meter;
    register<bit<32>>(512) flow_seen;
    register<bit<48>, bit<9>>(512) last_seen;
    action_selector(HashAlgorithm.crc16, 32w1024, 32w14) ecmp_selector;
    action_profile(128) nh_profile;

    action set_nexthop(mac_t dmac, bit<9> port) {
        hdr.ethernet.dst = dmac;
        standard_metadata.egress_spec = port;
        hdr.ipv4.ttl = hdr.ipv4.ttl |-| 1;
        route_hits.count();
    }
    action drop() { mark_to_drop(standard_metadata); }
    action learn() {
        digest<learn_digest_t>(1, { hdr.ethernet.src, standard_metadata.ingress_port });
    }
    action acl_permit() { acl_meter.read(meta.color); }

    table ecmp_group {
        key = {
            hdr.ipv4.dst      : lpm;
            hdr.ipv4.src      : selector;
            hdr.ipv4.dst      : selector;
            hdr.ipv4.protocol : selector;
            hdr.l4.sport      : selector;
            hdr.l4.dport      : selector;
        }
        actions = { set_nexthop; @defaultonly drop; }
        implementation = ecmp_selector;
        counters = route_hits;
        size = 4096;
        const default_action = drop;
    }
    table acl {
        key = {
            hdr.ipv4.src : ternary @name("src_ip");
            hdr.ipv4.dst : ternary;
            hdr.l4.dport : range;
            standard_metadata.ingress_port : optional;
        }
        actions = { acl_permit; @tableonly drop; }
        meters = acl_meter;
        support_timeout = true;
        size = 256;
    }
    table l2_learn {
        key = { hdr.ethernet.src : exact; }
        actions = { learn; NoAction; }
        implementation = nh_profile;
    }
    table shared {
        key = { hdr.ipv4.dst : exact; }
        actions = { set_nexthop; }
        implementation = action_selector(HashAlgorithm.crc32, 32w64, 32w8);
    }
    apply {
        port_counter.count((bit<32>) standard_metadata.ingress_port);
        port_meter.execute_meter<bit<2>>((bit<32>) standard_metadata.ingress_port, meta.color);
        hash(meta.ecmp_hash, HashAlgorithm.crc32, 14w0,
             { hdr.ipv4.src, hdr.ipv4.dst, hdr.ipv4.protocol }, 14w1 << 13);
        bit<32> seen;
        flow_seen.read(seen, (bit<32>) meta.ecmp_hash);
        flow_seen.write((bit<32>) meta.ecmp_hash, seen + 1);
        last_seen.write(standard_metadata.ingress_port, standard_metadata.ingress_global_timestamp);
        meta.seen = seen;
        if (!acl.apply().hit) {
            return;
        }
        l2_learn.apply();
        ecmp_group.apply();
        if (meta.color == 2w2) { drop(); }
        random(meta.seen, 32w0, 32w0xFFFF_FFFF);
    }
}

control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (sm.enq_qdepth_bytes > 32w100000 && hdr.ipv4.ecn != 0) {
            hdr.ipv4.ecn = 3;
        }
    }
}

control CC(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
              hdr.ipv4.len, hdr.ipv4.id, hdr.ipv4.flags, hdr.ipv4.frag,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src, hdr.ipv4.dst },
            hdr.ipv4.csum, HashAlgorithm.csum16);
    }
}

control D(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
