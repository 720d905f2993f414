// Registers and parser value sets of 0-bit values (P4_16 §7.1.6.2: `bit<0>`
// and `int<0>` hold one value, 0). A register of bit<0> cells reads 0 at any
// index and ignores what is written; a value set of bit<0> members matches
// every key once the control plane has added its one member, 0, and nothing
// while it is empty.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<0> z;
    bit<8> b;
}

header tag_t {
    bit<8> t;
}

struct headers_t {
    h_t   h;
    tag_t tag;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    value_set<bit<0>>(2) zero_set;

    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.z) {
            zero_set: parse_tag;
            default: accept;
        }
    }
    state parse_tag {
        pkt.extract(hdr.tag);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    register<bit<0>>(4) r0;
    register<int<0>>(4) s0;

    apply {
        sm.egress_spec = 1;
        bit<0> z;
        int<0> s;
        r0.write((bit<32>)hdr.h.a[1:0], hdr.h.z);
        r0.read(z, (bit<32>)hdr.h.a[1:0]);
        s0.write(3, (int<0>)1);
        s0.read(s, 3);
        // a ++ z keeps a; (bit<8>)(bit<0>)s is 0 (a cast changes the
        // sign or the width, not both, P4_16 §8.11.1).
        hdr.h.b = (hdr.h.a ++ z) + (bit<8>)(bit<0>)s;
        if (hdr.tag.isValid()) {
            hdr.tag.t = hdr.tag.t + 1;
            sm.egress_spec = 2;
        }
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
        pkt.emit(hdr.tag);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
