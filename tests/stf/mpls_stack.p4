// A label-switching tunnel built on a header stack: the parser walks the
// labels with .next/.last until bottom-of-stack and records .lastIndex;
// ingress pops (pop_front), pushes (push_front) or swaps the top label.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header mpls_t {
    bit<20> label;
    bit<3>  tc;
    bit<1>  bos;
    bit<8>  ttl;
}

struct headers_t {
    ethernet_t ethernet;
    mpls_t[4]  mpls;
}

struct meta_t {
    bit<8> depth;
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x8847: parse_mpls;
            default: accept;
        }
    }
    state parse_mpls {
        pkt.extract(hdr.mpls.next);
        meta.depth = (bit<8>)hdr.mpls.lastIndex;
        transition select(hdr.mpls.last.bos) {
            1: accept;
            default: parse_mpls;
        }
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    action drop() {
        mark_to_drop(sm);
    }
    action pop(bit<9> port) {
        hdr.mpls.pop_front(1);
        if (!hdr.mpls[0].isValid()) {
            hdr.ethernet.etherType = 0x0800;
        }
        sm.egress_spec = port;
    }
    action push(bit<20> label, bit<9> port) {
        hdr.mpls.push_front(1);
        hdr.mpls[0].setValid();
        hdr.mpls[0].label = label;
        hdr.mpls[0].tc = 0;
        hdr.mpls[0].bos = 0;
        hdr.mpls[0].ttl = hdr.mpls[1].ttl - 1;
        sm.egress_spec = port;
    }
    action swap(bit<20> label, bit<9> port) {
        hdr.mpls[0].label = label;
        hdr.mpls[0].ttl = hdr.mpls[0].ttl - 1;
        sm.egress_spec = port;
    }
    table lfib {
        key = { hdr.mpls[0].label : exact; }
        actions = { pop; push; swap; drop; }
        default_action = drop();
    }
    apply {
        if (hdr.mpls[0].isValid()) {
            lfib.apply();
            // Record how deep the parsed stack was (lastIndex + 1).
            hdr.ethernet.srcAddr[7:0] = meta.depth + 1;
        } else {
            drop();
        }
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.mpls);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
