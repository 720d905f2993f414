// Zero-width bit strings (P4_16 §7.1.6.2, §7.1.6.3: `bit<0>` and `int<0>`
// have exactly one value, 0): header fields of no bits take no room on the
// wire, a constant that does not fit becomes 0 (with a warning), casts to
// them give 0 and from them 0, `++` with one adds no bits, arithmetic
// on them stays 0, and a table key or action parameter of 0 bits takes 0.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<0> z0;
    bit<8> a;
    int<0> s0;
    bit<8> b;
    bit<0> z1;
}

header r_t {
    bit<8> c;
    bit<8> d;
    bit<8> e;
}

struct meta_t {
    bit<0> m0;
    bit<8> m;
}

struct headers_t {
    h_t h;
    r_t r;
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        pkt.extract(hdr.r);
        transition select(hdr.h.z0) {
            0: accept;
        }
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

bit<0> zero_of(in bit<8> x) {
    return (bit<0>)x;
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    action widen(bit<0> z) {
        hdr.r.e = (bit<8>)z + 8w0x20;
    }
    // A key of 0 bits matches its only value; P4Info gives it no bitwidth,
    // as p4c does, and P4Runtime's bytestring for it is that of 0.
    table zt {
        key = {
            hdr.h.a  : exact;
            hdr.h.z0 : exact;
        }
        actions = { widen; NoAction; }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        bit<0> tmp = 1;
        hdr.h.z0 = tmp;
        hdr.h.z1 = hdr.h.z0 + (bit<0>)hdr.h.a;
        hdr.h.s0 = (int<0>)(bit<0>)hdr.h.b;
        meta.m0 = zero_of(hdr.h.a) |+| 1;
        hdr.r.c = hdr.h.a ++ hdr.h.z1;
        hdr.r.d = (bit<8>)hdr.h.z0 + (bit<8>)(bit<0>)hdr.h.b + (bit<8>)(int<8>)hdr.h.s0;
        if (hdr.h.z0 == 0 && meta.m0 == tmp && (bit<8>)meta.m0 == 0) {
            zt.apply();
        }
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
        pkt.emit(hdr.r);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
