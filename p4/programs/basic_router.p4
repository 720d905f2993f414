/*
 * basic_router.p4: an IPv4 router with an ingress ACL, the reference
 * program of the compiler benchmark (p4/bench). Every routed packet goes
 * through parse, a ternary ACL, an LPM lookup, TTL decrement, checksum
 * recomputation and deparse.
 */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> total_len;
    bit<16> identification;
    bit<3>  flags;
    bit<13> frag_offset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

header l4_ports_t {
    bit<16> src_port;
    bit<16> dst_port;
}

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    l4_ports_t l4;
}

struct metadata_t { }

parser RouterParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t std_meta) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) {
            6: parse_l4;
            17: parse_l4;
            default: accept;
        }
    }
    state parse_l4 {
        pkt.extract(hdr.l4);
        transition accept;
    }
}

control RouterVerify(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control RouterIngress(inout headers_t hdr, inout metadata_t meta,
                      inout standard_metadata_t std_meta) {
    action drop() { mark_to_drop(std_meta); }

    action permit() { }

    table acl {
        key = {
            hdr.ipv4.src_addr: ternary;
            hdr.ipv4.dst_addr: ternary;
            hdr.ipv4.protocol: ternary;
            hdr.l4.dst_port: ternary;
        }
        actions = { permit; drop; }
        default_action = permit();
        size = 2048;
    }

    action set_nhop(bit<9> port, bit<48> dst_mac) {
        std_meta.egress_spec = port;
        hdr.ethernet.src_addr = hdr.ethernet.dst_addr;
        hdr.ethernet.dst_addr = dst_mac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    table ipv4_lpm {
        key = { hdr.ipv4.dst_addr: lpm; }
        actions = { set_nhop; drop; }
        default_action = drop();
        size = 65536;
    }

    apply {
        if (hdr.ipv4.isValid() && hdr.ipv4.ttl > 1) {
            switch (acl.apply().action_run) {
                drop: { }
                default: { ipv4_lpm.apply(); }
            }
        } else {
            drop();
        }
    }
}

control RouterEgress(inout headers_t hdr, inout metadata_t meta,
                     inout standard_metadata_t std_meta) {
    apply { }
}

control RouterCompute(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control RouterDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.l4);
    }
}

V1Switch(RouterParser(), RouterVerify(), RouterIngress(), RouterEgress(),
         RouterCompute(), RouterDeparser()) main;
