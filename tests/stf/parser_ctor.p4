// Parser constructor parameters (P4_16 §12.1, §10.3): a sub-parser
// instantiated twice with different constant arguments (one positional, one
// named with a default filled in), and the top-level parser instantiated with
// an argument in `V1Switch`.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header tag_t {
    bit<8> kind;
    bit<8> val;
}

struct headers_t {
    ethernet_t ethernet;
    tag_t      a;
    tag_t      b;
}

struct meta_t {
    bit<8> seen;
}

// Extracts one tag; if its kind is `expect`, ORs `mark` into `seen`.
parser TagParser(packet_in pkt, out tag_t t, inout bit<8> seen)(bit<8> expect, bit<8> mark = 2) {
    state start {
        pkt.extract(t);
        transition select(t.kind) {
            expect: matched;
            default: accept;
        }
    }
    state matched {
        seen = seen | mark;
        transition accept;
    }
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm)(bit<16> tagged_type) {
    TagParser(0xaa, 1) first;
    TagParser(expect = 0xbb) second;
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            tagged_type: tags;
            default: accept;
        }
    }
    state tags {
        first.apply(pkt, hdr.a, meta.seen);
        second.apply(pkt, hdr.b, meta.seen);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        if (hdr.b.isValid()) {
            hdr.b.val = meta.seen;
        }
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.a);
        pkt.emit(hdr.b);
    }
}

V1Switch(MyParser(0x88b5), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
